import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/** One connection through the relay: what the client sent, and what the server sent back. */
export interface RelayedConnection {
  /** Every byte the client sent, in order. */
  readonly sent: Buffer[];
  /** The server's bytes as each read from its socket returned them (one entry a read). */
  readonly reads: Buffer[];
  /** Whether the server closed the connection (its end of it). */
  readonly closedByServer: boolean;
}

export interface TcpRelayOptions {
  /**
   * A server's close of a connection reaches the client only when the client next sends on
   * it, and the client's request is then reset unanswered: a request crossing the close,
   * made to happen each time rather than by chance. Off: a close is passed on as it comes.
   */
  readonly holdCloses?: boolean;
}

/**
 * A TCP relay on 127.0.0.1 in front of a real server: each connection a client opens is
 * relayed to the server unchanged, and recorded, so a test can see how many connections a
 * client opened and in how many pieces the server's answers came, which neither end's API says.
 */
export class TcpRelay {
  readonly connections: RelayedConnection[] = [];
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  url = '';

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly options: TcpRelayOptions = {},
  ) {}

  /** A relay in front of the server `url` names (its host and port). */
  static to(url: string, options: TcpRelayOptions = {}): TcpRelay {
    const target = new URL(url);
    // What is recorded is read as HTTP/1.1: a TLS connection's bytes say nothing.
    if (target.protocol !== 'http:') throw new Error(`the TCP relay reads plain HTTP, not ${url}`);
    return new TcpRelay(target.hostname, Number(target.port || 80), options);
  }

  async start(): Promise<this> {
    this.server = createServer((client) => this.relay(client));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) =>
      this.server ? this.server.close(() => resolve()) : resolve(),
    );
  }

  private relay(client: Socket): void {
    const recorded = { sent: [] as Buffer[], reads: [] as Buffer[], closedByServer: false };
    this.connections.push(recorded);
    const upstream = createConnection({ host: this.host, port: this.port });
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.setNoDelay(true);
      socket.on('close', () => this.sockets.delete(socket));
      // A peer gone mid-test ends the other side too; the test asserts on what was recorded.
      socket.on('error', () => undefined);
    }
    client.on('data', (bytes: Buffer) => {
      recorded.sent.push(bytes);
      if (recorded.closedByServer && this.options.holdCloses) client.resetAndDestroy();
      else upstream.write(bytes);
    });
    upstream.on('data', (bytes: Buffer) => {
      recorded.reads.push(bytes);
      client.write(bytes);
    });
    client.on('end', () => upstream.end());
    upstream.on('end', () => {
      recorded.closedByServer = true;
      if (!this.options.holdCloses) client.end();
    });
  }
}
