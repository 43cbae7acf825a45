import { describe, expect, it } from 'vitest';
import { proofSteps } from './proof';
import type { VerifiedHost } from './types';

const base: VerifiedHost = {
  id: 1,
  host: 'proof.example.com',
  method: 'http',
  token: 'a'.repeat(32),
  verified: false,
  verifiedAt: null,
  checkedAt: null,
  lastError: null,
  httpPort: 8080,
  instructions: '',
  createdAt: '2024-01-01T00:00:00.000Z',
};

describe('proofSteps', () => {
  it('reads the file URL and content of the http instructions', () => {
    const h = {
      ...base,
      instructions: `Serve the text ${base.token} at http://proof.example.com:8080/.well-known/belfry-verification.txt, then call POST /verified-host/check.`,
    };
    expect(proofSteps(h)).toEqual({
      method: 'http',
      content: base.token,
      url: 'http://proof.example.com:8080/.well-known/belfry-verification.txt',
    });
  });

  it('reads the TXT record name and value of the dns instructions', () => {
    const h: VerifiedHost = {
      ...base,
      method: 'dns',
      httpPort: null,
      instructions: `Add a TXT record to proof.example.com: belfry-verification=${base.token}, then call POST /verified-host/check.`,
    };
    expect(proofSteps(h)).toEqual({
      method: 'dns',
      name: 'proof.example.com',
      value: `belfry-verification=${base.token}`,
    });
  });

  it('builds the values from the record when the instructions read otherwise', () => {
    expect(proofSteps({ ...base, host: '::1', httpPort: 80, instructions: 'x' })).toEqual({
      method: 'http',
      content: base.token,
      url: 'http://[::1]/.well-known/belfry-verification.txt',
    });
    expect(proofSteps({ ...base, method: 'dns', instructions: 'x' })).toMatchObject({
      name: 'proof.example.com',
      value: `belfry-verification=${base.token}`,
    });
  });
});
