/**
 * A data source's URL as the Sources panel writes and reads it: built from fields, the
 * password always kept out of it (sent apart, as `password`), and the kinds said in words.
 */

export type SourceKind = 'postgresql' | 'mysql' | 'sqlite' | 'duckdb';

export const KINDS: { value: SourceKind; label: string; port: number | null }[] = [
  { value: 'postgresql', label: 'PostgreSQL', port: 5432 },
  { value: 'mysql', label: 'MySQL / MariaDB', port: 3306 },
  { value: 'sqlite', label: 'SQLite file', port: null },
  { value: 'duckdb', label: 'DuckDB file', port: null },
];

export const isFileKind = (kind: string) => kind === 'sqlite' || kind === 'duckdb';

/** The kind a URL names by its scheme (`postgresql+psycopg://…` → postgresql), lower-cased. */
export const kindOf = (url: string) => url.trim().split(':')[0].split('+')[0].toLowerCase();

export function kindLabel(kind: string): string {
  return KINDS.find((k) => k.value === kind)?.label ?? kind;
}

/** How the backend keeps a source's queries read-only, in words. */
const ACCESS: Record<string, string> = {
  read_only_role: 'read-only role',
  read_only_transaction: 'read-only by construction: the role can write, every query runs in a read-only transaction',
  read_only_file: 'read-only file',
};

export function accessSentence(access: string | null | undefined): string | null {
  return access ? (ACCESS[access] ?? access.replaceAll('_', ' ')) : null;
}

/** What the agent calls a source (`sql(…, source=name)`): the backend's rule, said as a sentence. */
export const NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_-]*$/;

export function nameProblem(name: string): string | null {
  if (!name) return 'Give the source a name.';
  if (name.length > 64) return 'A name has at most 64 characters.';
  if (!NAME_PATTERN.test(name)) return 'A name starts with a letter and has only letters, digits, _ and - (the agent writes it in its code).';
  return null;
}

// As SQLAlchemy reads a URL: the password is what follows the user's colon, up to the first @.
const WITH_PASSWORD = /^([A-Za-z][\w+.-]*:\/\/)([^:/@]*):([^@]*)@/;

/**
 * Takes the password out of a URL a user typed or pasted: the URL without it, and the password
 * (decoded, as the server would read it) to send apart. No password: the URL as it is, and null.
 */
export function splitPassword(url: string): { url: string; password: string | null } {
  const m = WITH_PASSWORD.exec(url.trim());
  if (!m) return { url: url.trim(), password: null };
  let password = m[3];
  try {
    password = decodeURIComponent(password);
  } catch {
    /* not percent-encoded: as typed */
  }
  return { url: `${m[1]}${m[2]}@${url.trim().slice(m[0].length)}`, password };
}

/** A source's URL as the server shows it, for editing: the masked password (`:***`) left out. */
export function editableUrl(displayUrl: string): string {
  return splitPassword(displayUrl).url;
}

export type SourceFields = { kind: SourceKind; host: string; port: string; database: string; user: string; path: string };

export const emptyFields: SourceFields = { kind: 'postgresql', host: '', port: '', database: '', user: '', path: '' };

/** The URL the fields describe, without a password: `postgresql://user@host:5432/db`, `sqlite:////srv/data/shop.db`. */
export function urlFromFields(f: SourceFields): string {
  if (isFileKind(f.kind)) return `${f.kind}:///${f.path.trim()}`;
  const host = f.host.trim();
  const user = encodeURIComponent(f.user.trim());
  const port = f.port.trim() || String(KINDS.find((k) => k.value === f.kind)?.port ?? '');
  const database = f.database.trim();
  return `${f.kind}://${user}${user ? '@' : ''}${host.includes(':') ? `[${host}]` : host}${port ? `:${port}` : ''}${database ? `/${encodeURIComponent(database)}` : ''}`;
}

/** What is missing from the fields before they make a URL worth sending. */
export function fieldsProblem(f: SourceFields): string | null {
  if (isFileKind(f.kind)) return f.path.trim() ? null : "Give the file's path on the server.";
  if (!f.host.trim()) return "Give the database server's host.";
  if (!f.user.trim()) return 'Give the user to connect as.';
  if (f.port.trim() && !/^\d{1,5}$/.test(f.port.trim())) return 'The port is a number, such as 5432.';
  return null;
}
