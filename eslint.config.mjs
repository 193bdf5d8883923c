// @ts-check
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';
import globals from 'globals';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      '**/node_modules/**',
      'tools/mcp-check/results/**',
      'coverage/**',
      '.data/**',
      'bench/results/**',
    ],
  },
  eslint.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    languageOptions: { globals: { ...globals.node, ...globals.jest } },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/no-floating-promises': 'off',
      // Ids, titles and tags are checked for control characters on purpose.
      'no-control-regex': 'off',
      'no-restricted-properties': [
        'error',
        {
          object: 'process',
          property: 'env',
          message: 'Read configuration through AppConfig (src/config).',
        },
      ],
    },
  },
  {
    files: [
      'src/config/**',
      'src/main.ts',
      // The command line is a client: AGENT_DATA_URL and AGENT_DATA_API_KEY are its own.
      'src/cli/main.ts',
      'src/cli/server-client.ts',
      'test/**',
      'bench/**',
      'docker/**',
      '**/*.mjs',
      'tools/qdrant-binary.js',
      'tools/build-if-stale.js',
    ],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    // CommonJS loaders (the worker-thread entry when running from TypeScript sources).
    files: ['**/*.js'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
