import { type EndReason, type ListenSink, ListenStream } from './listen-stream';
import { HonouredFilter } from './subscription-filter';

/** A sink that takes `room` messages, then reports full until {@link drain}. */
class FakeSink implements ListenSink {
  readonly written: Array<Record<string, unknown>> = [];
  last: object | undefined;
  ended = false;
  private resume: (() => void) | undefined;

  constructor(private room: number) {}

  write(message: object): boolean {
    this.written.push(message as Record<string, unknown>);
    return --this.room > 0;
  }

  onDrain(resume: () => void): void {
    this.resume = resume;
  }

  end(last: object | undefined): void {
    this.ended = true;
    this.last = last;
  }

  drain(room: number): void {
    this.room = room;
    const resume = this.resume;
    this.resume = undefined;
    resume?.();
  }
}

function stream(sink: FakeSink, limit: number, ends: EndReason[] = []) {
  return new ListenStream('s1', new HonouredFilter(true, ['kb://a/']), sink, limit, (_s, why) =>
    ends.push(why),
  );
}

describe('ListenStream', () => {
  it('stamps every message with the subscription id, acknowledgement first', () => {
    const sink = new FakeSink(100);
    const s = stream(sink, 10);
    s.acknowledge();
    s.updated('kb://a/1.md');
    expect(sink.written.map((m) => m.method)).toEqual([
      'notifications/subscriptions/acknowledged',
      'notifications/resources/updated',
    ]);
    for (const message of sink.written) {
      expect(message.params).toMatchObject({
        _meta: { 'io.modelcontextprotocol/subscriptionId': 's1' },
      });
    }
  });

  it('queues while the sink is full and sends the queue in order when it drains', () => {
    const sink = new FakeSink(1);
    const s = stream(sink, 10);
    s.updated('kb://a/0.md');
    for (let i = 1; i <= 5; i++) s.updated(`kb://a/${i}.md`);
    expect(sink.written).toHaveLength(1);
    expect(s.queued).toBe(5);
    sink.drain(100);
    expect(s.queued).toBe(0);
    expect(sink.written.map((m) => (m.params as { uri: string }).uri)).toEqual(
      [0, 1, 2, 3, 4, 5].map((i) => `kb://a/${i}.md`),
    );
  });

  it('never queues more than its limit: one more ends it with an error saying it fell behind', () => {
    const sink = new FakeSink(1);
    const ends: EndReason[] = [];
    const s = stream(sink, 3, ends);
    s.updated('kb://a/0.md');
    for (let i = 1; i <= 3; i++) s.updated(`kb://a/${i}.md`);
    expect(s.queued).toBe(3);
    s.updated('kb://a/4.md');
    expect(s.open).toBe(false);
    expect(s.queued).toBe(0);
    expect(ends).toEqual(['overflow']);
    expect(sink.last).toMatchObject({
      jsonrpc: '2.0',
      id: 's1',
      error: { data: { code: 'LISTENER_TOO_SLOW', limit: 3 } },
    });
    // Nothing more is written once it ended.
    s.updated('kb://a/5.md');
    sink.drain(100);
    expect(sink.written).toHaveLength(1);
  });

  it('keeps one waiting list change, not one per change', () => {
    const sink = new FakeSink(1);
    const s = stream(sink, 3);
    s.updated('kb://a/0.md');
    for (let i = 0; i < 10; i++) s.listChanged();
    expect(s.queued).toBe(1);
    sink.drain(100);
    s.listChanged();
    expect(sink.written.map((m) => m.method)).toEqual([
      'notifications/resources/updated',
      'notifications/resources/list_changed',
      'notifications/resources/list_changed',
    ]);
  });

  it('ends gracefully on shutdown with the empty result of the listen request', () => {
    const sink = new FakeSink(100);
    stream(sink, 3).end('shutdown');
    expect(sink.last).toMatchObject({
      id: 's1',
      result: { _meta: { 'io.modelcontextprotocol/subscriptionId': 's1' } },
    });
  });
});

describe('HonouredFilter', () => {
  it('honours document and folder URIs, leaves out the rest, and matches folders by whole segments', () => {
    const filter = HonouredFilter.of({
      resourceSubscriptions: ['kb://a/1.md', 'kb://team/', 'file:///etc', 'kb://x/../y', 'kb://'],
      toolsListChanged: true,
    });
    expect(filter.acknowledged()).toEqual({
      resourceSubscriptions: ['kb://a/1.md', 'kb://team/'],
    });
    expect(filter.names('a/1.md')).toBe(true);
    expect(filter.names('a/2.md')).toBe(false);
    expect(filter.names('team/deep/x.md')).toBe(true);
    expect(filter.names('teammate/x.md')).toBe(false);
    expect(filter.changesList('create')).toBe(false);
  });

  it('list changes are the operations that add or take away a document', () => {
    const filter = HonouredFilter.of({ resourcesListChanged: true });
    expect(
      ['create', 'delete', 'restore', 'purge', 'move', 'moved-away'].every((op) =>
        filter.changesList(op as never),
      ),
    ).toBe(true);
    expect(filter.changesList('update')).toBe(false);
  });
});
