import { LexicalFirstLane } from '../src/vectors/sync/lexical-first.lane';
import { VectorBatchProcessor } from '../src/vectors/sync/vector-batch.processor';
import { VectorQueueRepository } from '../src/vectors/sync/vector-queue.repository';
import { startTestApp, type TestApp } from './support/app';

describe('the lexical pass after a restore, when the application stops', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ VECTOR_SYNC_ENABLED: 'true' });
  });
  afterAll(() => t?.close());

  it('is ended and waited for, so that nothing writes to the index after the pipeline stopped', async () => {
    const lane = t.app.get(LexicalFirstLane);
    // A restore's pass in flight: documents behind, their analysis running until it is ended.
    jest.spyOn(t.app.get(VectorQueueRepository), 'lexicalBehind').mockResolvedValue([
      {
        document_id: 'restored/a.md',
        revision: 1,
        title: 'A',
        tags: [],
        body: 'Restored.',
        queued_at: '2026-11-30 00:00:00+00',
      },
    ]);
    let analysing!: () => void;
    const started = new Promise<void>((resolve) => (analysing = resolve));
    jest
      .spyOn(t.app.get(VectorBatchProcessor), 'analyseLexically')
      .mockImplementation((_rows, signal) => {
        analysing();
        return new Promise((_, reject) =>
          signal.addEventListener('abort', () => reject(new Error('ended'))),
        );
      });
    const pass = lane.catchUp(undefined, undefined, true);
    pass.catch(() => undefined);
    await started;
    await lane.onModuleDestroy();
    await expect(pass).rejects.toThrow('ended');
  });
});
