import { describe, expect, it } from 'vitest';
import { filenameFromContentDisposition as parse } from './content-disposition';

describe('filenameFromContentDisposition', () => {
  it('reads a quoted or a bare filename', () => {
    expect(parse('attachment; filename="Sales 2026.ipynb"')).toBe('Sales 2026.ipynb');
    expect(parse('attachment; filename=report.html')).toBe('report.html');
    expect(parse('attachment;filename=report.html;size=12')).toBe('report.html');
    expect(parse('ATTACHMENT; FileName = "a.md" ')).toBe('a.md');
  });

  it('prefers filename* (RFC 8187) over filename, whichever comes first', () => {
    expect(parse(`attachment; filename="Umsatz.ipynb"; filename*=UTF-8''Ums%C3%A4tze%20%E2%82%AC.ipynb`)).toBe('Umsätze €.ipynb');
    expect(parse(`attachment; filename*=utf-8'de'Ums%C3%A4tze.md; filename="Umsatze.md"`)).toBe('Umsätze.md');
    expect(parse(`attachment; filename*=ISO-8859-1''caf%E9.html`)).toBe('café.html');
  });

  it('falls back to filename when filename* cannot be read', () => {
    expect(parse(`attachment; filename*=UTF-8''bad%E2%82.md; filename="plain.md"`)).toBe('plain.md');
    expect(parse(`attachment; filename*=KOI8-R''x.md; filename="plain.md"`)).toBe('plain.md');
    expect(parse(`attachment; filename*=no-quotes.md; filename=plain.md`)).toBe('plain.md');
  });

  it('keeps semicolons and escaped quotes inside a quoted name', () => {
    expect(parse('attachment; filename="a; b \\"c\\".html"; x=1')).toBe('a; b "c".html');
  });

  it('drops directory parts and control characters', () => {
    expect(parse('attachment; filename="../../etc/passwd"')).toBe('passwd');
    expect(parse(`attachment; filename*=UTF-8''..%2F..%5Cevil.html`)).toBe('evil.html');
    expect(parse('attachment; filename="a\u0007b.md"')).toBe('ab.md');
  });

  it('gives null when no file is named', () => {
    expect(parse(null)).toBeNull();
    expect(parse('')).toBeNull();
    expect(parse('attachment')).toBeNull();
    expect(parse('inline; name="x"')).toBeNull();
    expect(parse('attachment; filename=""')).toBeNull();
    expect(parse('attachment; filename=".."')).toBeNull();
  });
});
