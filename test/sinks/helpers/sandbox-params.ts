import type { OperationSpec } from '../../../src/index.ts';

/** The smallest valid parameters: required ones (or the first of a "one of" pair) with an `-n<records>` identifier. */
export function sandboxParams(op: OperationSpec, records: number): Record<string, string | number> {
  const params: Record<string, string | number> = {};
  const names = [...Object.entries(op.params).filter(([, spec]) => spec.required).map(([name]) => name)];
  for (const [first] of op.oneOf ?? []) names.push(first);
  for (const name of names) {
    const spec = op.params[name];
    if (name === 'lat') params[name] = 40.7;
    else if (name === 'lng') params[name] = -74;
    else if (spec.pattern) params[name] = '1784512345';
    else if (name === 'url') params[name] = `https://example.com/${op.id.replace(/\//g, '-')}-n${records}`;
    else params[name] = `sample-n${records}`;
  }
  return params;
}
