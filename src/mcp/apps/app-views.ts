import { Injectable, Logger } from '@nestjs/common';
import type { McpUiResourceMeta } from '@modelcontextprotocol/ext-apps';
import { RESOURCE_MIME_TYPE, RESOURCE_URI_META_KEY } from '@modelcontextprotocol/ext-apps/server';
import type { ReadResourceResult, Resource } from '@modelcontextprotocol/sdk/types.js';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** One view: a `ui://` resource, the file `npm run build` writes it to, the tool it shows. */
interface ViewDefinition {
  readonly uri: string;
  readonly file: string;
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly tool: string;
}

export const SEARCH_VIEW_URI = 'ui://agent-data/search-results';
export const DOCUMENT_VIEW_URI = 'ui://agent-data/document';

const DEFINITIONS: readonly ViewDefinition[] = [
  {
    uri: SEARCH_VIEW_URI,
    file: 'search-results.html',
    name: 'search-results',
    title: 'Search results',
    description:
      'The hits of search_knowledge with their heading paths and highlighted passages; opens a hit to read it.',
    tool: 'search_knowledge',
  },
  {
    uri: DOCUMENT_VIEW_URI,
    file: 'document.html',
    name: 'document',
    title: 'Document',
    description:
      'A document of get_document rendered, with its provenance and revision, and an editor that writes with expected_revision.',
    tool: 'get_document',
  },
];

/**
 * The views declare that they reach nothing outside the host: no network at all (they talk
 * to the server only through the host, over postMessage), no outside images, fonts or
 * frames. The HTML's own Content-Security-Policy narrows scripts and styles further, to the
 * hashes of the ones it carries.
 */
const UI_META: McpUiResourceMeta = Object.freeze({
  csp: { connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] },
  prefersBorder: true,
});

interface BuiltView extends ViewDefinition {
  readonly html: string;
}

/**
 * The MCP Apps views (docs/mcp.md): two `ui://` resources of single HTML documents, built by
 * `npm run build` (console/build-views.mjs) into dist/apps and read once at start-up. When
 * they were not built the server offers no views to anyone, rather than tools naming
 * resources it cannot serve.
 */
@Injectable()
export class AppViews {
  private readonly views: ReadonlyMap<string, BuiltView>;
  readonly available: boolean;

  constructor() {
    const dir = builtViewsDir();
    this.available = dir !== undefined;
    if (dir === undefined) {
      new Logger('AppViews').warn(
        'the MCP Apps views are not built (npm run build): no host is offered them',
      );
      this.views = new Map();
      return;
    }
    this.views = new Map(
      DEFINITIONS.map((view) => [
        view.uri,
        { ...view, html: readFileSync(join(dir, view.file), 'utf8') },
      ]),
    );
  }

  /** The `resources/list` entries of the views. */
  resources(): Resource[] {
    return [...this.views.values()].map((view) => ({
      uri: view.uri,
      name: view.name,
      title: view.title,
      description: view.description,
      mimeType: RESOURCE_MIME_TYPE,
      _meta: { ui: UI_META },
    }));
  }

  /** The `resources/read` result of a view, `undefined` for any other URI. */
  read(uri: string): ReadResourceResult | undefined {
    const view = this.views.get(uri);
    if (view === undefined) return undefined;
    return {
      contents: [{ uri, mimeType: RESOURCE_MIME_TYPE, text: view.html, _meta: { ui: UI_META } }],
    };
  }
}

/**
 * The `_meta` a tool carries in an Apps host's `tools/list` when a view shows its results:
 * `ui.resourceUri`, and the flat key hosts of the first drafts read.
 */
export function viewMetaOf(tool: string): Record<string, unknown> | undefined {
  const view = DEFINITIONS.find((definition) => definition.tool === tool);
  if (view === undefined) return undefined;
  return { ui: { resourceUri: view.uri }, [RESOURCE_URI_META_KEY]: view.uri };
}

/** dist/apps, seen from the build (dist/src/mcp/apps) or from the sources (src/mcp/apps). */
function builtViewsDir(): string | undefined {
  const candidates = [
    join(__dirname, '..', '..', '..', 'apps'),
    join(__dirname, '..', '..', '..', 'dist', 'apps'),
  ];
  return candidates.find((dir) => DEFINITIONS.every((view) => existsSync(join(dir, view.file))));
}
