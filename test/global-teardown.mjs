import pg from 'pg';

export default async function globalTeardown() {
  await globalThis.__AGENT_DATA_QDRANT__?.destroy();
  const cluster = globalThis.__AGENT_DATA_PG__;
  if (cluster) {
    await cluster.stop();
    return;
  }
  // An external server (TEST_DATABASE_URL): drop the template this run created.
  const admin = new pg.Client({ connectionString: process.env.AGENT_DATA_TEST_SERVER_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${process.env.AGENT_DATA_TEST_TEMPLATE}`);
  await admin.end();
}
