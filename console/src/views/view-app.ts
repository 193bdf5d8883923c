import {
  App,
  applyDocumentTheme,
  applyHostStyleVariables,
  type McpUiHostContext,
} from '@modelcontextprotocol/ext-apps';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

type ToolResult = Parameters<NonNullable<App['ontoolresult']>>[0];
type ToolInput = Parameters<NonNullable<App['ontoolinput']>>[0];

/** A view's host connection, and the tool input and result it delivers. */
export interface ViewHost {
  readonly app: App;
  /** Calls `listener` with each tool input, the latest one at once if it came already. */
  onInput(listener: (input: ToolInput) => void): void;
  /** Calls `listener` with each tool result, the latest one at once if it came already. */
  onResult(listener: (result: ToolResult) => void): void;
}

/**
 * A view's connection to its host (the MCP Apps `App`): `ui/initialize` over postMessage, the
 * host's theme applied, sizes reported as the content changes (autoResize), and the tool
 * calls and resource reads the view makes, forwarded by the host to this server. The tool's
 * input and result are kept, so a component that subscribes after they came still sees them.
 */
export function connectView(name: string): ViewHost {
  const app = new App({ name, version: '1' }, {}, { autoResize: true });
  const theme = (context: McpUiHostContext | undefined) => {
    if (context?.theme) applyDocumentTheme(context.theme);
    if (context?.styles?.variables) applyHostStyleVariables(context.styles.variables);
  };
  let input: ToolInput | undefined;
  let result: ToolResult | undefined;
  let inputListener: ((input: ToolInput) => void) | undefined;
  let resultListener: ((result: ToolResult) => void) | undefined;
  app.onhostcontextchanged = theme;
  app.ontoolinput = (params) => {
    input = params;
    inputListener?.(params);
  };
  app.ontoolresult = (params) => {
    result = params;
    resultListener?.(params);
  };
  void app.connect().then(() => theme(app.getHostContext()));
  return {
    app,
    onInput(listener) {
      inputListener = listener;
      if (input !== undefined) listener(input);
    },
    onResult(listener) {
      resultListener = listener;
      if (result !== undefined) listener(result);
    },
  };
}

/**
 * The error a failed tool call reports, if any: `{"error": {"code", "message", "hint", ...}}`,
 * with the code's details (`current_revision` for a conflict) beside the code, not nested.
 */
export interface ToolFailure {
  readonly code: string;
  readonly message: string;
  readonly [detail: string]: unknown;
}

export function failureOf(result: CallToolResult): ToolFailure | undefined {
  if (!result.isError) return undefined;
  const text = result.content.find((item) => item.type === 'text')?.text ?? '';
  try {
    const parsed = JSON.parse(text) as { error?: ToolFailure };
    if (parsed.error?.code) return parsed.error;
  } catch {
    // not JSON: shown as it is
  }
  return { code: 'ERROR', message: text || 'The call failed.' };
}

/** The URI of a document as a resource: `kb://` and the id, each segment percent-encoded. */
export function documentUri(id: string): string {
  return `kb://${id.split('/').map(encodeURIComponent).join('/')}`;
}

/**
 * Handles a click inside rendered markdown: a link to another document (the console's
 * `#/doc/<id>` address, see markdown.ts) opens it in the view, any other link goes to the
 * host (`ui/open-link`), which decides whether and how to open it. Nothing navigates the
 * view's own frame.
 */
export function followLink(event: MouseEvent, app: App, open: (id: string) => void): void {
  const anchor = (event.target as Element | null)?.closest?.('a');
  if (!anchor) return;
  const target = anchor.getAttribute('href') ?? '';
  if (target.startsWith('#') && !target.startsWith('#/doc/')) return;
  event.preventDefault();
  if (target.startsWith('#/doc/')) {
    const path = target.slice('#/doc/'.length).split('?')[0];
    open(path.split('/').map(safeDecode).join('/'));
  } else if (/^https?:/i.test(target)) {
    void app.openLink({ url: target });
  }
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
