// eslint with typescript-eslint's recommended rules over the project's TypeScript and
// JavaScript; generated and vendored files are left out.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'target/', 'data/', 'native/index.js', 'native/index.d.ts', 'native/npm/', 'bench/results/', '**/*.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      // Parsers here match record separators and NULs on purpose (GeoJSON text sequences,
      // hostile inputs).
      'no-control-regex': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
    },
  },
  // Tests read JSON of any shape.
  { files: ['test/**'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
  {
    languageOptions: { ecmaVersion: 2023, sourceType: 'module', globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', setImmediate: 'readonly', URL: 'readonly', fetch: 'readonly', performance: 'readonly', AbortController: 'readonly', TextDecoder: 'readonly', TextEncoder: 'readonly', queueMicrotask: 'readonly', structuredClone: 'readonly', Response: 'readonly', Request: 'readonly', Headers: 'readonly', AbortSignal: 'readonly', __dirname: 'readonly', require: 'readonly', module: 'writable' } },
  },
);
