// typescript-eslint's type-checked recommended set over all the TypeScript in the repository: its rules
// read the types, so they catch the floating promises and stray `any`s a syntax-only linter cannot see.
// Four choices of ours, each with its reason below.
import eslint from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['dist/', 'docs/api/', 'out/'] },
  eslint.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['vitest.config.ts', 'vitest.*.config.ts'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // `_` names a value that must be taken but is not used: a skipped loop item, a field dropped by a rest pattern.
      '@typescript-eslint/no-unused-vars': ['error', { varsIgnorePattern: '^_', argsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // `async` here keeps a Promise-returning contract (AsyncIterator methods, sink steps, async generator
      // sources) whose body happens not to await; dropping it would turn a rejection into a synchronous throw.
      '@typescript-eslint/require-await': 'off',
      // A walk rejects with what stopped it: an abort's `signal.reason` or its source's failure, unchanged.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
    },
  },
  {
    // Tests parse what the code wrote (JSON files, CLI output) and check it with `expect`, which is where
    // an `any` meets its assertion.
    files: ['test/**'],
    rules: {
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-redundant-type-constituents': 'off',
    },
  },
  { files: ['**/*.js', '**/*.mjs'], extends: [tseslint.configs.disableTypeChecked] },
);
