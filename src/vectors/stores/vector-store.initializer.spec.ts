import { Logger } from '@nestjs/common';
import type { Embedder } from '../embedders/embedder.interface';
import { VectorStoreInitializer } from './vector-store.initializer';
import type { VectorStore } from './vector-store.interface';

const embedder = { provider: 'local', model: 'test', dimensions: 8 } as Embedder;

function initializer(init: VectorStore['init']): VectorStoreInitializer {
  return new VectorStoreInitializer({ init } as VectorStore, embedder);
}

describe('VectorStoreInitializer', () => {
  let warned: jest.SpyInstance;
  beforeEach(() => {
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });
  afterEach(() => jest.restoreAllMocks());

  it('tells the store a reset is done only after every handler queued the documents', async () => {
    const steps: string[] = [];
    const stores = initializer(() =>
      Promise.resolve({
        reset: 'the collection is new',
        afterReset: async () => {
          steps.push('after reset');
        },
      }),
    );
    stores.onReset(async (why) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      steps.push(`queued: ${why}`);
    });
    stores.onReset(async () => {
      steps.push('lexical side');
    });
    await stores.ready();
    expect(steps).toEqual(['queued: the collection is new', 'lexical side', 'after reset']);
    expect(stores.isReady).toBe(true);
  });

  it('does not tell the store when a handler failed, and tries again on the next use', async () => {
    const afterReset = jest.fn(() => Promise.resolve());
    const stores = initializer(() => Promise.resolve({ reset: 'marked', afterReset }));
    stores.onReset(() => Promise.reject(new Error('database down')));
    await expect(stores.ready()).rejects.toThrow('database down');
    expect(afterReset).not.toHaveBeenCalled();
    expect(stores.error).toBe('database down');
  });

  it('is ready when the store cannot mark the reset done, and says the next start asks again', async () => {
    const stores = initializer(() =>
      Promise.resolve({
        reset: 'marked',
        afterReset: () => Promise.reject(new Error('Qdrant refused')),
      }),
    );
    await stores.ready();
    expect(stores.isReady).toBe(true);
    expect(warned).toHaveBeenCalledWith(
      'marked: not marked as done (Qdrant refused), asked again at the next start',
    );
  });

  it('runs no handler when the store holds what it held', async () => {
    const handler = jest.fn(() => Promise.resolve());
    const stores = initializer(() => Promise.resolve({ reset: false }));
    stores.onReset(handler);
    await stores.ready();
    expect(handler).not.toHaveBeenCalled();
  });
});
