import { loadConfig } from '../../config/load-config';
import { limitedArgs } from './document-fields';

/** The descriptions a model reads for the limited arguments, under a configuration. */
function descriptions(env: Record<string, string>): Record<string, string | undefined> {
  const args = limitedArgs(loadConfig(env).limits);
  return Object.fromEntries(Object.entries(args).map(([name, arg]) => [name, arg.description]));
}

describe('limitedArgs', () => {
  it('says the default limits as tools/list has always shown them', () => {
    expect(descriptions({})).toEqual({
      content: 'The markdown body (at most 1 MiB).',
      title:
        'Title (at most 300 characters); by default the first markdown heading, else the last id segment.',
      tags: 'Tags (at most 50 short strings).',
      metadata: 'Free-form JSON object stored with the document (at most 64 KiB).',
    });
  });

  it('says the limits the configuration sets', () => {
    expect(
      descriptions({
        MAX_BODY_BYTES: String(3 * 1024 * 1024),
        MAX_TITLE_CHARS: '80',
        MAX_TAGS: '7',
        MAX_METADATA_BYTES: '1000',
      }),
    ).toEqual({
      content: 'The markdown body (at most 3 MiB).',
      title:
        'Title (at most 80 characters); by default the first markdown heading, else the last id segment.',
      tags: 'Tags (at most 7 short strings).',
      metadata: 'Free-form JSON object stored with the document (at most 1000 bytes).',
    });
  });
});
