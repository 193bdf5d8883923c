// Preloaded (`node -r`) into a command under test: the loopback port AGENT_DATA_TEST_PORT_SEEN_FREE
// names looks free to the command's check (a listen on it succeeds without binding), as when
// another process takes a port between the check and PostgreSQL's own bind.
'use strict';
const net = require('node:net');

const port = Number(process.env.AGENT_DATA_TEST_PORT_SEEN_FREE);
if (port > 0) {
  const listen = net.Server.prototype.listen;
  net.Server.prototype.listen = function (...args) {
    if (args[0] !== port) return listen.apply(this, args);
    const done = args.find((arg) => typeof arg === 'function');
    this.close = (closed) => {
      if (closed) setImmediate(closed);
      return this;
    };
    setImmediate(() => done && done());
    return this;
  };
}
