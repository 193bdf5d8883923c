import { SUPPORTED_PROTOCOL_VERSIONS as SDK_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { McpHttpException } from './json-rpc-error';
import {
  isModernVersion,
  LEGACY_PROTOCOL_VERSIONS,
  negotiateProtocolVersion,
  requestProtocolVersion,
  SUPPORTED_PROTOCOL_VERSIONS,
  supportsResourceLinks,
} from './protocol-version';

describe('protocol versions', () => {
  it('supports exactly the documented list, newest first', () => {
    expect(SUPPORTED_PROTOCOL_VERSIONS).toEqual([
      '2026-07-28',
      '2025-11-25',
      '2025-06-18',
      '2025-03-26',
      '2024-11-05',
    ]);
  });

  it('takes the handshake revisions from the SDK, leaving out the 2024-10-07 draft', () => {
    expect(SDK_VERSIONS.filter((v) => !LEGACY_PROTOCOL_VERSIONS.includes(v))).toEqual([
      '2024-10-07',
    ]);
    expect(LEGACY_PROTOCOL_VERSIONS.every((v) => SDK_VERSIONS.includes(v))).toBe(true);
  });

  it.each([
    ['2026-07-28', true],
    ['2027-01-01', true],
    ['2025-11-25', false],
    ['2024-10-07', false],
    ['garbage', false],
    ['v999.0.0', false],
  ])('%p is of the stateless era: %p', (version, modern) => {
    expect(isModernVersion(version)).toBe(modern);
  });

  it('offers resource links from 2025-06-18 on', () => {
    expect(['2024-11-05', '2025-03-26'].map(supportsResourceLinks)).toEqual([false, false]);
    expect(['2025-06-18', '2025-11-25', '2026-07-28'].map(supportsResourceLinks)).toEqual([
      true,
      true,
      true,
    ]);
  });

  it('reads an absent header as 2025-03-26', () => {
    expect(requestProtocolVersion({})).toBe('2025-03-26');
  });

  it.each(['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', ' 2025-06-18 '])(
    'accepts %p',
    (version) => {
      expect(requestProtocolVersion({ 'mcp-protocol-version': version })).toBe(version.trim());
    },
  );

  it.each(['2024-10-07', '1999-01-01', '', 'latest'])(
    'refuses %p with 400 listing the supported versions',
    (version) => {
      let error: unknown;
      try {
        requestProtocolVersion({ 'mcp-protocol-version': version });
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(McpHttpException);
      expect((error as McpHttpException).getStatus()).toBe(400);
      expect((error as McpHttpException).message).toContain(
        '2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05',
      );
    },
  );

  it('answers initialize with the client version when supported, else the newest handshake revision', () => {
    expect(negotiateProtocolVersion('2024-11-05')).toBe('2024-11-05');
    expect(negotiateProtocolVersion('2025-06-18')).toBe('2025-06-18');
    expect(negotiateProtocolVersion('2024-10-07')).toBe('2025-11-25');
    expect(negotiateProtocolVersion('2099-01-01')).toBe('2025-11-25');
    expect(negotiateProtocolVersion('2026-07-28')).toBe('2025-11-25');
  });
});
