// The esbuild options the console and the MCP Apps views share: one Preact bundle each, for
// the same browsers, kept in memory for the build script to write.
export const BUNDLE_OPTIONS = {
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['chrome115', 'firefox115', 'safari16'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  outdir: 'bundle',
  write: false,
  legalComments: 'none',
  logLevel: 'warning',
};
