import { SUPPORTED_PROTOCOL_VERSIONS as SDK_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { McpHttpException } from './json-rpc-error';
import {
  negotiateProtocolVersion,
  requestProtocolVersion,
  SUPPORTED_PROTOCOL_VERSIONS,
} from './protocol-version';

describe('protocol versions', () => {
  it('supports exactly the SPEC list, newest first', () => {
    expect(SUPPORTED_PROTOCOL_VERSIONS).toEqual([
      '2025-11-25',
      '2025-06-18',
      '2025-03-26',
      '2024-11-05',
    ]);
  });

  it('differs from the SDK list only by versions the SPEC leaves out', () => {
    expect(SDK_VERSIONS.filter((v) => !SUPPORTED_PROTOCOL_VERSIONS.includes(v))).toEqual([
      '2024-10-07',
    ]);
    expect(SUPPORTED_PROTOCOL_VERSIONS.every((v) => SDK_VERSIONS.includes(v))).toBe(true);
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

  it('answers initialize with the client version when supported, else the newest', () => {
    expect(negotiateProtocolVersion('2024-11-05')).toBe('2024-11-05');
    expect(negotiateProtocolVersion('2025-06-18')).toBe('2025-06-18');
    expect(negotiateProtocolVersion('2024-10-07')).toBe('2025-11-25');
    expect(negotiateProtocolVersion('2099-01-01')).toBe('2025-11-25');
  });
});
