import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { LexicalReplica } from './lexical.replica';

describe('LexicalReplica left running', () => {
  afterEach(() => jest.useRealTimers());

  it('ends its background work once its database is closed, and warns of nothing', async () => {
    jest.useFakeTimers();
    const query = jest.fn().mockResolvedValue([]);
    const dataSource = { isInitialized: true, query } as unknown as DataSource;
    const warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      new LexicalReplica(dataSource, { snapshots: true });
      expect(jest.getTimerCount()).toBe(2);
      (dataSource as { isInitialized: boolean }).isInitialized = false;
      await jest.advanceTimersByTimeAsync(120_000);
      expect(jest.getTimerCount()).toBe(0);
      expect(query).not.toHaveBeenCalled();
      expect(warned).not.toHaveBeenCalled();
    } finally {
      warned.mockRestore();
    }
  });
});
