/**
 * Every platform module of the sandbox, and the routing table built from them once at load. Adding
 * a platform is one import and one entry here.
 */
import type { SandboxOperation } from '../platform.ts';
import { operations as forum } from './forum.ts';
import { operations as microblog } from './microblog.ts';
import { operations as photoshare } from './photoshare.ts';
import { operations as professional } from './professional.ts';
import { operations as searchAdLibrary } from './search-ad-library.ts';
import { operations as search } from './search.ts';
import { operations as shortvideoShop } from './shortvideo-shop.ts';
import { operations as shortvideo } from './shortvideo.ts';
import { operations as socialnetAdLibrary } from './socialnet-ad-library.ts';
import { operations as socialnetMarketplace } from './socialnet-marketplace.ts';
import { operations as socialnet } from './socialnet.ts';
import { operations as threadtext } from './threadtext.ts';
import { operations as videosite } from './videosite.ts';

/** All scrape operations the sandbox serves (API reference part 4, E2–E27). */
export const operations: readonly SandboxOperation[] = [
  ...shortvideo,
  ...shortvideoShop,
  ...socialnet,
  ...socialnetMarketplace,
  ...socialnetAdLibrary,
  ...videosite,
  ...microblog,
  ...searchAdLibrary,
  ...photoshare,
  ...forum,
  ...professional,
  ...search,
  ...threadtext,
];

/** The routing table: operation id (path below `/v1/scrape/`) → operation. */
export function operationTable(list: readonly SandboxOperation[] = operations): ReadonlyMap<string, SandboxOperation> {
  const table = new Map<string, SandboxOperation>();
  for (const operation of list) {
    if (table.has(operation.id)) throw new Error(`sandbox: two platform modules define ${operation.id}`);
    table.set(operation.id, operation);
  }
  return table;
}
