import { isLocalPeer } from './local-agent';

describe('isLocalPeer', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.8.9.10', true],
    ['::1', true],
    ['::ffff:127.0.0.1', true],
    ['10.0.0.1', false],
    ['::ffff:192.0.2.1', false],
    ['1127.0.0.1', false],
    ['fe80::1', false],
    [undefined, false],
  ])('%s to 192.0.2.7 is from this machine: %s', (address, local) => {
    expect(isLocalPeer(address, '192.0.2.7')).toBe(local);
  });

  it('takes a connection to the address it comes from as local', () => {
    expect(isLocalPeer('192.0.2.7', '192.0.2.7')).toBe(true);
    expect(isLocalPeer('::ffff:192.0.2.7', '::ffff:192.0.2.7')).toBe(true);
  });
});
