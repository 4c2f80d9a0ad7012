import { describe, expect, it } from 'vitest';
import { artifactContentPath, isExternalHref, isImageDataUri } from './safe-url';

const ID = '0b7e6a4c-9d1f-4e2a-8c3b-5f6a7b8c9d0e';

describe('artifactContentPath', () => {
  it("accepts only this app's artifact content URLs", () => {
    expect(artifactContentPath(`/api/v1/artifacts/${ID}/content`)).toBe(`/api/v1/artifacts/${ID}/content`);
    expect(artifactContentPath(`${window.location.origin}/api/v1/artifacts/${ID}/content`)).toBe(`/api/v1/artifacts/${ID}/content`);
  });

  it.each([
    'http://evil.example/?d=SECRET',
    `http://evil.example/api/v1/artifacts/${ID}/content`,
    `//evil.example/api/v1/artifacts/${ID}/content`,
    `\\\\evil.example/api/v1/artifacts/${ID}/content`,
    `/api/v1/artifacts/${ID}/content?d=SECRET`,
    `/api/v1/artifacts/${ID}/content#x`,
    `/api/v1/artifacts/${ID}`,
    '/api/v1/artifacts/not-an-id/content',
    `/api/v1/files/${ID}/content`,
    'data:image/png;base64,AAAA',
    'javascript:alert(1)',
    '',
    null,
  ])('refuses %s', (url) => {
    expect(artifactContentPath(url)).toBeNull();
  });
});

describe('isExternalHref', () => {
  it('tells links that leave the app from those that stay', () => {
    expect(isExternalHref('https://example.org/a')).toBe(true);
    expect(isExternalHref('mailto:a@example.org')).toBe(true);
    expect(isExternalHref('/projects/1')).toBe(false);
  });
});

describe('isImageDataUri', () => {
  it('accepts inline images only', () => {
    expect(isImageDataUri('data:image/png;base64,AAAA')).toBe(true);
    expect(isImageDataUri('data:image/svg+xml,<svg/>')).toBe(true);
    expect(isImageDataUri('data:text/html,<b>')).toBe(false);
    expect(isImageDataUri('https://evil.example/x.png')).toBe(false);
    expect(isImageDataUri(42)).toBe(false);
  });
});
