/**
 * The house's dependency rule (docs/decisions.md), checked by `npm run lint`:
 * - the domain is plain TypeScript: no I/O, no driver, no HTTP, no adapter;
 * - the delivery worker does not reach into the HTTP layer;
 * - no import cycles anywhere (type-only imports included: a cycle of types is still a knot).
 * Paths match on `(^|/)src/…` so test/dependency-rule.test.ts can run these same rules over
 * fixtures that break them.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'Import cycles tie modules together so neither can change or load alone.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'domain-imports-no-layer',
      severity: 'error',
      comment: 'The domain imports nothing from http/, storage/, delivery/, rate-limit/ or cli/.',
      from: { path: '(^|/)src/domain/' },
      to: {
        path: '(^|/)src/(http|storage|delivery|rate-limit|cli)/|(^|/)src/(main|config|logger)\\.ts$',
      },
    },
    {
      name: 'domain-does-no-io',
      severity: 'error',
      comment:
        'The domain does no I/O: no network, file system, database driver, HTTP framework or logger. Adapters behind ports do.',
      from: { path: '(^|/)src/domain/' },
      to: {
        dependencyTypes: [
          'core',
          'npm',
          'npm-dev',
          'npm-optional',
          'npm-peer',
          'npm-no-pkg',
          'npm-unknown',
        ],
        path: '^(node:)?(fs|fs/promises|net|dns|dns/promises|http|https|http2|tls|dgram|child_process|worker_threads|cluster)$|(^|/)node_modules/(pg|pg-pool|better-sqlite3|ioredis|undici|fastify|@fastify/[^/]+|pino|prom-client)/',
      },
    },
    {
      name: 'delivery-imports-no-http',
      severity: 'error',
      comment: 'The delivery worker runs without the HTTP layer (`trackway worker`).',
      from: { path: '(^|/)src/delivery/' },
      to: { path: '(^|/)src/http/' },
    },
    {
      name: 'storage-imports-no-http',
      severity: 'error',
      from: { path: '(^|/)src/storage/' },
      to: { path: '(^|/)src/(http|delivery)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.test\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
  },
};
