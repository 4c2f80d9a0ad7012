import { describe, expect, it } from 'vitest';
import { uploadErrorMessage } from './upload';

const file = new File(['x'.repeat(2048)], 'big.csv');

describe('uploadErrorMessage', () => {
  it('uses the server detail, names the file, and explains too-large and unsupported files', () => {
    expect(uploadErrorMessage(413, { detail: 'Files may be at most 1 KB.', code: 'too_large' }, file)).toBe(
      'big.csv: Files may be at most 1 KB (this file is 2.0 KB).',
    );
    expect(uploadErrorMessage(415, { detail: 'big.csv: files of this type cannot be used here.', code: 'unsupported_file_type' }, file)).toBe(
      'big.csv: files of this type cannot be used here.',
    );
    expect(uploadErrorMessage(413, null, file)).toBe('big.csv is too large (2.0 KB).');
    expect(uploadErrorMessage(415, null, file)).toBe('big.csv is not a supported file type.');
    expect(uploadErrorMessage(500, null, file)).toBe('big.csv: Request failed (HTTP 500).');
  });
});
