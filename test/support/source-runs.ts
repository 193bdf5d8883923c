import request from 'supertest';
import { waitFor } from './wait';

/** What the tests read of a source's run (`GET /sources/{id}/runs`). */
export interface EndedRun {
  readonly id: string;
  readonly status: string;
}

/**
 * Waits for the oldest of the source's last 50 runs that `matches` to end, and gives it. A
 * run is found in the source's list of runs, never as its `last_run`: a folder's watch makes
 * runs of its own as soon as its first sync ends, so the run a test means is often not the
 * last.
 */
export async function sourceRunEnded<Run extends EndedRun>(
  baseUrl: string,
  headers: Record<string, string>,
  source: string,
  matches: (run: Run) => boolean,
  what = `a run of ${source}`,
): Promise<Run> {
  return waitFor(
    async () => {
      const { body } = await request(baseUrl)
        .get(`/sources/${source}/runs?limit=50`)
        .set(headers)
        .expect(200);
      const run = (body.runs as Run[]).filter(matches).at(-1);
      return run !== undefined && !['queued', 'running'].includes(run.status) && run;
    },
    `${what} to end`,
    { timeoutMs: 45_000, intervalMs: 100 },
  );
}
