import { Module } from '@nestjs/common';
import { McpFraming } from './mcp-framing';
import { TransportMetrics } from './transport.metrics';

/**
 * MCP Streamable HTTP transport: Accept negotiation, JSON / single-event SSE framing,
 * Origin, Content-Type, body-size and protocol-version checks, and JSON-RPC error bodies.
 * Its guard and filter are applied by the MCP controller, which frames its answers with
 * {@link McpFraming}.
 */
@Module({ providers: [TransportMetrics, McpFraming], exports: [TransportMetrics, McpFraming] })
export class TransportModule {}
