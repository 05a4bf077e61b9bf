/** docs/cli.md is the commands' own help: a change to a command's help without `npm run docs:cli` fails here. */
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { CLI_REFERENCE, cliReference } from '../../scripts/cli-reference.ts';

it('docs/cli.md is what npm run docs:cli writes from the help of each command today', async () => {
  const committed = readFileSync(CLI_REFERENCE, 'utf8');
  const fresh = await cliReference();
  expect(committed === fresh, 'docs/cli.md is stale: run `npm run docs:cli` and commit docs/cli.md').toBe(true);
});
