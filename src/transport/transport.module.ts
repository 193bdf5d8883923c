import { Module } from '@nestjs/common';
import { TransportMetrics } from './transport.metrics';

/**
 * MCP Streamable HTTP transport: Accept negotiation, JSON / single-event SSE framing,
 * Origin, Content-Type, body-size and protocol-version checks, and JSON-RPC error bodies.
 * Its guard, interceptor and filter are applied by the MCP controller.
 */
@Module({ providers: [TransportMetrics], exports: [TransportMetrics] })
export class TransportModule {}
