/**
 * What the MCP controller hands to {@link McpFraming}: the answer, not yet framed.
 *
 * * `rpc`: a JSON-RPC envelope or batch, framed by the Accept negotiation (JSON or one SSE
 *   event). 406 when the negotiation found nothing acceptable.
 * * `accepted`: notifications and client responses only: 202 with an empty body, whatever
 *   the Accept.
 * * `json`: plain JSON whatever the Accept (the GET info document).
 * * `empty`: a body-less answer with its own status and headers (CORS preflight).
 * * `streamed`: the handler opened a long-lived stream on the response itself (a
 *   `subscriptions/listen` SSE stream): nothing more to write.
 */
export type McpReply =
  | {
      readonly kind: 'rpc';
      readonly status: number;
      readonly payload: unknown;
      /** Sent only when the answer is the whole response (not an already open stream). */
      readonly headers?: Readonly<Record<string, string>>;
    }
  | { readonly kind: 'accepted' }
  | {
      readonly kind: 'json';
      readonly status: number;
      readonly payload: unknown;
      readonly headers?: Readonly<Record<string, string>>;
    }
  | {
      readonly kind: 'empty';
      readonly status: number;
      readonly headers: Readonly<Record<string, string>>;
    }
  | { readonly kind: 'streamed' };
