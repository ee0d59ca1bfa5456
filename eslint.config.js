// @ts-check
const tseslint = require('typescript-eslint');
const { builtinModules } = require('node:module');

// zod 4's string formats whose check resets the lastIndex of an expression kept in zod's own module (checked
// against zod 4.6.7 with its modules frozen as the sandbox freezes them): the workflow task fails, or for httpUrl
// every value is refused.
const ZOD_SHARED_PATTERN_FORMATS = [
  'email', 'guid', 'nanoid', 'cuid', 'cuid2', 'ulid', 'xid', 'ksuid', 'ipv4', 'cidrv4', 'e164',
  'lowercase', 'uppercase', 'date', 'duration', 'httpUrl',
];

/** Modules that do I/O or are not deterministic: forbidden in workflow code. */
const workflowForbidden = [
  ...builtinModules,
  ...builtinModules.map((m) => `node:${m}`),
  'openai',
  'mongodb',
  '@modelcontextprotocol/sdk',
  '@temporalio/client',
  '@temporalio/worker',
  '@temporalio/activity',
  '@temporalio/workflow-streams/client',
];

module.exports = tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', '.tools/**', '.data/**', 'coverage/**', '**/*.js', '**/*.mjs'] },
  ...tseslint.configs.recommended,
  {
    // CommonJS files Node loads as they are (a workflow thread's script): require is how they import.
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', module: 'writable', __dirname: 'readonly', process: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: __dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            ...workflowForbidden.map((name) => ({
              name,
              message: 'Workflow code must be deterministic: do I/O in an activity.',
              allowTypeImports: true,
            })),
            {
              name: '@temporalio/workflow',
              importNames: ['patched', 'deprecatePatch'],
              message: 'Check patches with isPatched() from workflows/patches.ts: a run with the patch baseline records no marker for the patches it covers.',
            },
          ],
          patterns: [
            { group: ['@modelcontextprotocol/sdk/*', 'mongodb/*', 'openai/*'], allowTypeImports: true, message: 'Workflow code must be deterministic: do I/O in an activity.' },
            { group: ['../activities/*', '!../activities/activity-types'], allowTypeImports: true, message: 'Import activity code as types only.' },
            { group: ['../codec', '../codec/*'], message: 'The payload codec runs outside the sandbox (node:crypto); workflows never see ciphertext.' },
          ],
        },
      ],
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'No process.env in workflows: pass values in the workflow input.' },
        { name: 'setTimeout', message: 'Use sleep() from @temporalio/workflow.' },
        { name: 'setInterval', message: 'Use sleep() from @temporalio/workflow.' },
      ],
      // zod is preloaded into the sandbox and frozen (workflows/shared-libraries.ts): these string formats reset
      // the lastIndex of an expression kept in zod's module, which a frozen one refuses, failing the workflow task.
      'no-restricted-syntax': [
        'error',
        {
          selector: `CallExpression[callee.type='MemberExpression'][callee.property.name=/^(${ZOD_SHARED_PATTERN_FORMATS.join('|')})$/]`,
          message: 'This zod format tests an expression in zod\'s shared, frozen module: it fails the workflow task (httpUrl refuses every value). Use .regex() with an expression of your own (workflows/shared-libraries.ts).',
        },
      ],
      'no-restricted-properties': [
        'error',
        { object: 'Math', property: 'random', message: 'Use uuid4() or a seeded value from the workflow API.' },
        { object: 'z', property: 'regexes', message: 'zod\'s expressions are shared and frozen in the sandbox (workflows/shared-libraries.ts): use an expression of your own.' },
        { object: 'Date', property: 'now', message: 'Read workflow time through workflow-clock.ts.' },
      ],
    },
  },
  {
    // The console runs in a browser: no Node globals (the bundle would carry a shim, or fail).
    files: ['web/src/**'],
    rules: {
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'The console runs in a browser.' },
        { name: 'require', message: 'The console runs in a browser: import modules.' },
        { name: 'Buffer', message: 'The console runs in a browser.' },
      ],
    },
  },
);
