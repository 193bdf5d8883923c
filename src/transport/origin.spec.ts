import { isOriginAllowed } from './origin';

describe('isOriginAllowed', () => {
  describe('ALLOWED_ORIGINS unset: loopback origins only', () => {
    it.each([
      'http://localhost',
      'http://localhost:6274',
      'https://localhost:8443',
      'http://127.0.0.1:3000',
      'http://127.9.9.9',
      'http://[::1]:8080',
      'HTTP://LOCALHOST:5173',
    ])('admits %s', (origin) => {
      expect(isOriginAllowed(origin, undefined)).toBe(true);
    });

    it.each([
      'http://evil.com',
      'http://localhost.evil.com',
      'http://127.0.0.1.nip.io',
      'http://10.0.0.1',
      'null',
      'file://',
      'chrome-extension://abcdef',
      'not a url',
      '',
    ])('refuses %p', (origin) => {
      expect(isOriginAllowed(origin, undefined)).toBe(false);
    });
  });

  describe('ALLOWED_ORIGINS set', () => {
    const allowed = ['https://chatgpt.com', 'https://app.example.com:8443', 'http://localhost:*'];

    it.each([
      'https://chatgpt.com',
      'https://ChatGPT.com',
      'https://chatgpt.com:443',
      'https://app.example.com:8443',
      'http://localhost:1234',
      'http://localhost',
    ])('admits %s', (origin) => {
      expect(isOriginAllowed(origin, allowed)).toBe(true);
    });

    it.each([
      'http://chatgpt.com',
      'https://chatgpt.com:444',
      'https://evil.chatgpt.com',
      'https://app.example.com',
      'https://localhost:1234',
      'http://127.0.0.1:1234',
      'null',
    ])('refuses %s (loopback is not implied once the list is set)', (origin) => {
      expect(isOriginAllowed(origin, allowed)).toBe(false);
    });

    it('admits everything with "*" and "null" only when listed', () => {
      expect(isOriginAllowed('https://anything.example', ['*'])).toBe(true);
      expect(isOriginAllowed('null', ['null'])).toBe(true);
    });
  });
});
