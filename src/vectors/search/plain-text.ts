import { Lexer, type Token, type Tokens } from 'marked';
import { extractLinks } from '../../documents/links/markdown-links';

/**
 * The text a reader sees in a passage of markdown, for search snippets: no `#` before a
 * heading, no `|---|` under a table header, no `**`, backticks or link targets; a table's
 * cells separated by ` · `, list items by `;`, blocks by a space; a `[[wikilink]]` as its
 * label, or its target. Code keeps its text.
 * Reading is marked's lexer (the console renders with marked too), so what counts as
 * markdown is what a renderer would take as markdown.
 */
export function plainText(markdown: string): string {
  const { text, labels } = withWikilinksMarked(markdown);
  let tokens: Token[];
  try {
    tokens = new Lexer({ gfm: true }).lex(text);
  } catch {
    return markdown;
  }
  const plain = blocks(tokens).replace(/\s+/g, ' ').trim();
  return labels.length === 0 ? plain : plain.replace(MARK, (_, i: string) => labels[Number(i)]);
}

function blocks(tokens: readonly Token[]): string {
  return tokens
    .map(block)
    .filter((text) => text !== '')
    .join(' ');
}

function block(token: Token): string {
  switch (token.type) {
    case 'heading':
    case 'paragraph':
    case 'text':
      return 'tokens' in token && token.tokens ? inline(token.tokens) : decode(token.text);
    case 'code':
      return (token as Tokens.Code).text;
    case 'blockquote':
      return blocks((token as Tokens.Blockquote).tokens);
    case 'list':
      return (token as Tokens.List).items.map((item) => blocks(item.tokens)).join('; ');
    case 'table': {
      const table = token as Tokens.Table;
      const row = (cells: Tokens.TableCell[]) => cells.map((c) => inline(c.tokens)).join(' · ');
      return [row(table.header), ...table.rows.map(row)].join('; ');
    }
    case 'html':
      return withoutTags(token.text);
    case 'space':
    case 'hr':
    case 'def':
      return '';
    default:
      return 'text' in token && typeof token.text === 'string' ? token.text : '';
  }
}

function inline(tokens: readonly Token[]): string {
  return tokens
    .map((token) => {
      switch (token.type) {
        case 'strong':
        case 'em':
        case 'del':
        case 'link':
          return inline((token as Tokens.Strong).tokens);
        case 'image':
          return (token as Tokens.Image).text;
        case 'codespan':
          return decode((token as Tokens.Codespan).text);
        case 'br':
          return ' ';
        case 'html':
          return withoutTags(token.text);
        default:
          return 'tokens' in token && token.tokens
            ? inline(token.tokens)
            : decode((token as { text?: string }).text ?? '');
      }
    })
    .join('');
}

/**
 * Where a wikilink was, in the text marked lexes: characters of Unicode's private use area
 * around its number, which no markdown rule reads (in a paragraph, a table, an HTML block
 * alike), put back as its words once the text is read.
 */
const MARK = /\uE000(\d+)\uE001/g;

/**
 * The markdown with each wikilink (`[[ops/backup]]`, `[[ops/backup#restore|Restore]]`,
 * `![[diagram.png]]`) replaced by a mark, and the words each mark stands for: its label, or
 * its target (an embed's: `![[diagram.png|300]]` gives a width, not words). Which brackets
 * are a wikilink (never in code) is the link reader's, as for the document's links.
 */
function withWikilinksMarked(markdown: string): { text: string; labels: string[] } {
  const labels: string[] = [];
  if (!markdown.includes('[[') || /[\uE000\uE001]/.test(markdown))
    return { text: markdown, labels };
  let text = '';
  let at = 0;
  for (const link of extractLinks(markdown)) {
    if (link.kind !== 'wikilink') continue;
    const embed = markdown.charCodeAt(link.start) === 33; // '!'
    text += `${markdown.slice(at, link.start)}\uE000${labels.length}\uE001`;
    labels.push(embed ? link.target : link.label);
    at = link.end;
  }
  return { text: text + markdown.slice(at), labels };
}

function withoutTags(html: string): string {
  return decode(html.replace(/<[^>]*>/g, ' '));
}

/** marked escapes `&`, `<`, `>` and quotes in the text it hands back: the snippet wants them. */
function decode(text: string): string {
  return text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
}
