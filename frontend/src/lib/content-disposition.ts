/**
 * The file name a `Content-Disposition` header gives (RFC 6266): `filename*` (RFC 8187,
 * `UTF-8''percent%20encoded`) wins over the plain `filename`, which may be a token or a quoted
 * string. Directory parts are dropped; null when the header names no usable file.
 */
export function filenameFromContentDisposition(header: string | null | undefined): string | null {
  if (!header) return null;
  const params = parseParams(header);
  const extended = params.get('filename*');
  const plain = params.get('filename');
  return (extended !== undefined ? baseName(decodeExtValue(extended)) : null) ?? (plain !== undefined ? baseName(plain) : null);
}

/** The header's `name=value` parameters (names lower-cased, quoted values unescaped), after the disposition type. */
function parseParams(header: string): Map<string, string> {
  const params = new Map<string, string>();
  let i = header.indexOf(';');
  if (i < 0) return params;
  while (i < header.length) {
    i++; // past ';'
    const eq = header.indexOf('=', i);
    const semi = header.indexOf(';', i);
    if (eq < 0) break;
    if (semi >= 0 && semi < eq) {
      i = semi; // a parameter without a value
      continue;
    }
    const name = header.slice(i, eq).trim().toLowerCase();
    i = eq + 1;
    while (header[i] === ' ' || header[i] === '\t') i++;
    let value = '';
    if (header[i] === '"') {
      i++;
      while (i < header.length && header[i] !== '"') {
        if (header[i] === '\\' && i + 1 < header.length) i++;
        value += header[i++];
      }
      const next = header.indexOf(';', i);
      i = next < 0 ? header.length : next;
    } else {
      const next = header.indexOf(';', i);
      const end = next < 0 ? header.length : next;
      value = header.slice(i, end).trim();
      i = end;
    }
    // The first occurrence counts; a repeated parameter makes the header ambiguous, not the later one right.
    if (name && !params.has(name)) params.set(name, value);
  }
  return params;
}

/** `charset'language'percent-encoded` → the text, or null when it cannot be read. */
function decodeExtValue(value: string): string | null {
  const m = /^([^']*)'[^']*'(.*)$/.exec(value);
  if (!m) return null;
  const charset = m[1].toLowerCase();
  const encoded = m[2];
  try {
    if (charset === 'utf-8') return decodeURIComponent(encoded);
    if (charset === 'iso-8859-1') return encoded.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  } catch {
    /* malformed percent-encoding: fall back to `filename` */
  }
  return null;
}

/** The last path segment without control characters: a header must not choose the folder. */
function baseName(name: string | null): string | null {
  if (name === null) return null;
  const base = (name.split(/[/\\]/).pop() ?? '').replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return base && base !== '.' && base !== '..' ? base : null;
}
