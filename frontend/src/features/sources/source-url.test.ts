import { describe, expect, it } from 'vitest';
import { accessSentence, editableUrl, emptyFields, fieldsProblem, nameProblem, splitPassword, urlFromFields } from './source-url';

describe('source URLs', () => {
  it('takes the password out of a typed URL, decoded, and leaves the rest as typed', () => {
    expect(splitPassword('postgresql://ana:s3cr%40t@db.internal:5432/shop')).toEqual({
      url: 'postgresql://ana@db.internal:5432/shop',
      password: 's3cr@t',
    });
    expect(splitPassword(' mysql://ana@db/shop ')).toEqual({ url: 'mysql://ana@db/shop', password: null });
    expect(splitPassword('sqlite:////srv/data/shop.db')).toEqual({ url: 'sqlite:////srv/data/shop.db', password: null });
    expect(splitPassword('postgresql://ana:@db/shop')).toEqual({ url: 'postgresql://ana@db/shop', password: '' });
  });

  it("edits a shown URL without its masked password", () => {
    expect(editableUrl('postgresql://ana:***@db.internal:5432/shop?sslmode=require')).toBe('postgresql://ana@db.internal:5432/shop?sslmode=require');
  });

  it('builds a URL from fields, without a password, with the default port', () => {
    const f = { ...emptyFields, host: 'db.internal', user: 'ana b', database: 'shop' };
    expect(urlFromFields(f)).toBe('postgresql://ana%20b@db.internal:5432/shop');
    expect(urlFromFields({ ...f, kind: 'mysql', port: '3307', host: '::1' })).toBe('mysql://ana%20b@[::1]:3307/shop');
    expect(urlFromFields({ ...emptyFields, kind: 'sqlite', path: '/srv/data/shop.db' })).toBe('sqlite:////srv/data/shop.db');
    expect(fieldsProblem({ ...f, host: '' })).toBe("Give the database server's host.");
    expect(fieldsProblem({ ...f, port: 'x' })).toBe('The port is a number, such as 5432.');
    expect(fieldsProblem({ ...emptyFields, kind: 'duckdb' })).toBe("Give the file's path on the server.");
    expect(fieldsProblem(f)).toBeNull();
  });

  it('says names and access in words', () => {
    expect(nameProblem('shop_2')).toBeNull();
    expect(nameProblem('2shop')).toMatch(/starts with a letter/);
    expect(nameProblem('')).toBe('Give the source a name.');
    expect(accessSentence('read_only_transaction')).toBe('read-only by construction: the role can write, every query runs in a read-only transaction');
    expect(accessSentence('read_only_role')).toBe('read-only role');
    expect(accessSentence(null)).toBeNull();
  });
});
