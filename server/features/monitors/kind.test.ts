import { describe, expect, it } from 'vitest';
import { isLoopbackHost } from './kind';

describe('isLoopbackHost', () => {
  it('knows the loopback names and addresses', () => {
    for (const h of ['localhost', 'LOCALHOST.', 'app.localhost', '127.0.0.1', '127.8.9.10', '::1', '[::1]'])
      expect(isLoopbackHost(h), h).toBe(true);
  });
  it('treats every other host as remote', () => {
    for (const h of ['example.com', '10.0.0.1', '192.168.1.2', '128.0.0.1', 'localhost.example.com', '::2'])
      expect(isLoopbackHost(h), h).toBe(false);
  });
});
