import { contentHash, DocumentFields } from './document-fields';
import { refusal } from '../../test/support/refusal';

const fields = new DocumentFields({
  maxBodyBytes: 1024,
  maxMetadataBytes: 1024,
  maxTitleChars: 100,
  maxTags: 5,
  maxTagChars: 20,
});

describe('DocumentFields and lone surrogates (text with no UTF-8 form)', () => {
  it('stores a body, title and tag holding one as U+FFFD, its hash that of what is stored', () => {
    const content = fields.content('a.md', {
      body: 'cut \ud83d',
      title: '\ude00 t',
      tags: ['x\ud800'],
    });
    expect(content).toMatchObject({ body: 'cut \ufffd', title: '\ufffd t', tags: ['x\ufffd'] });
    expect(content.content_hash).toBe(contentHash('cut \ufffd'));
    // A pair is a character, left alone.
    expect(fields.body('an emoji \ud83d\ude00')).toBe('an emoji \ud83d\ude00');
  });

  it.each([[{ k: 'a\ud800' }], [{ 'key\udc00': 1 }], [{ nested: [{ deep: '\udbff' }] }]])(
    'refuses metadata %j naming metadata',
    (metadata) => {
      const refused = refusal(() => fields.metadata(metadata));
      expect(refused.message).toBe('metadata: must be valid Unicode text (a lone surrogate)');
    },
  );
});
