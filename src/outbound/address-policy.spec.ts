import { AddressPolicy, embeddedIpv4 } from './address-policy';

describe('AddressPolicy', () => {
  const strict = new AddressPolicy();

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.215.14',
    '2606:4700:4700::1111',
    '2a00:1450:4007:80f::200e',
    '::ffff:8.8.8.8',
    '::ffff:808:808',
    '64:ff9b::808:808',
  ])('allows the public address %s', (address) => {
    expect(strict.refusal(address)).toBeUndefined();
  });

  describe('refuses non-public IPv4', () => {
    it.each([
      ['0.0.0.0', 'this network'],
      ['0.1.2.3', 'this network'],
      ['10.0.0.1', 'private'],
      ['10.255.255.255', 'private'],
      ['100.64.0.1', 'CGNAT'],
      ['100.127.255.254', 'CGNAT'],
      ['127.0.0.1', 'loopback'],
      ['127.255.255.254', 'loopback'],
      ['169.254.0.1', 'link-local'],
      ['172.16.0.1', 'private'],
      ['172.31.255.255', 'private'],
      ['192.0.0.8', 'IETF'],
      ['192.0.2.10', 'TEST-NET-1'],
      ['192.88.99.1', '6to4 relay'],
      ['192.168.1.1', 'private'],
      ['198.18.0.1', 'benchmarking'],
      ['198.51.100.7', 'TEST-NET-2'],
      ['203.0.113.9', 'TEST-NET-3'],
      ['224.0.0.251', 'multicast'],
      ['239.255.255.250', 'multicast'],
      ['240.0.0.1', 'reserved'],
      ['255.255.255.255', 'broadcast'],
    ])('%s (%s)', (address) => {
      expect(strict.refusal(address)).toMatch(/not a public address/);
    });
  });

  describe('refuses non-public IPv6 and IPv6 spellings of non-public IPv4', () => {
    it.each([
      '::',
      '::1',
      '[::1]',
      '0:0:0:0:0:0:0:1',
      'fe80::1',
      'fe80::1%eth0',
      'fc00::1',
      'fd12:3456:789a::1',
      'fec0::1',
      'ff02::1',
      '100::1',
      '2001:db8::1',
      '2001::1',
      '2002:7f00:1::1',
      '3fff::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '0:0:0:0:0:ffff:7f00:1',
      '::ffff:10.0.0.1',
      '::ffff:192.168.0.1',
      '::127.0.0.1',
      '::7f00:1',
      '64:ff9b::7f00:1',
      '64:ff9b::a00:1',
      '64:ff9b:1::1',
    ])('%s', (address) => {
      expect(strict.refusal(address)).toMatch(/not a public address/);
    });
  });

  describe('refuses cloud metadata, in every spelling', () => {
    it.each([
      '169.254.169.254',
      '169.254.170.2',
      '100.100.100.200',
      '168.63.129.16',
      '::ffff:169.254.169.254',
      '::ffff:a9fe:a9fe',
      '64:ff9b::a9fe:a9fe',
      'fd00:ec2::254',
    ])('%s', (address) => {
      expect(strict.refusal(address)).toMatch(/cloud metadata/);
    });
  });

  describe('INGEST_ALLOWED_PRIVATE_CIDRS opens exactly the listed ranges', () => {
    const open = new AddressPolicy(['127.0.0.1/32', '10.1.0.0/16', 'fd00:1::/32']);

    it.each(['127.0.0.1', '::ffff:127.0.0.1', '10.1.2.3', 'fd00:1::5'])('allows %s', (address) => {
      expect(open.refusal(address)).toBeUndefined();
    });

    it.each(['127.0.0.2', '::1', '10.2.0.1', '192.168.0.1', 'fd00:2::1'])(
      'still refuses %s',
      (address) => {
        expect(open.refusal(address)).toMatch(/not a public address/);
      },
    );

    it('never opens a metadata address, even inside an allowed range', () => {
      const wide = new AddressPolicy(['169.254.0.0/16', 'fd00::/8', '0.0.0.0/0']);
      expect(wide.refusal('169.254.169.254')).toMatch(/cloud metadata/);
      expect(wide.refusal('fd00:ec2::254')).toMatch(/cloud metadata/);
      expect(wide.refusal('169.254.1.1')).toBeUndefined();
    });
  });

  it('refuses what is not an IP address', () => {
    expect(strict.refusal('example.com')).toMatch(/not an IP address/);
  });
});

describe('embeddedIpv4', () => {
  it.each([
    ['::ffff:127.0.0.1', '127.0.0.1'],
    ['::ffff:7f00:1', '127.0.0.1'],
    ['0:0:0:0:0:ffff:a9fe:a9fe', '169.254.169.254'],
    ['::7f00:1', '127.0.0.1'],
    ['64:ff9b::808:808', '8.8.8.8'],
    ['::1', undefined],
    ['::', undefined],
    ['2001:db8::1', undefined],
    ['fe80::ffff:7f00:1', undefined],
  ])('%s → %s', (ipv6, ipv4) => {
    expect(embeddedIpv4(ipv6)).toBe(ipv4);
  });
});
