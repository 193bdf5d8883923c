import { z } from 'zod';
import { fieldsOf } from './schema-fields';

describe('fieldsOf', () => {
  const shape = z.object({
    id: z.string(),
    at: z.string(),
    gone: z.string().nullable(),
    tags: z.array(z.string()),
  });
  const answer = fieldsOf(shape);

  it("keeps the schema's fields in its order and leaves the others behind", () => {
    const row = { secret: 'x', tags: ['a'], gone: null, at: 't', id: 'd' };
    const shown = answer(row);
    expect(shown).toEqual({ id: 'd', at: 't', gone: null, tags: ['a'] });
    expect(JSON.stringify(shown)).toBe('{"id":"d","at":"t","gone":null,"tags":["a"]}');
  });

  it('shows times as ISO 8601 text', () => {
    const at = new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 6));
    expect(answer({ id: 'd', at, gone: at, tags: [] })).toEqual({
      id: 'd',
      at: '2026-01-02T03:04:05.006Z',
      gone: '2026-01-02T03:04:05.006Z',
      tags: [],
    });
  });
});
