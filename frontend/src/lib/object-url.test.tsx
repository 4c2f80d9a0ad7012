import { renderHook } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { useObjectUrl } from './object-url';

let made = 0;
beforeEach(() => {
  made = 0;
  URL.createObjectURL = vi.fn(() => `blob:${++made}`);
  URL.revokeObjectURL = vi.fn();
});
afterEach(() => vi.restoreAllMocks());

describe('useObjectUrl', () => {
  it('revokes the URL when the blob is replaced and when the component goes', () => {
    const first = new Blob(['a']);
    const { result, rerender, unmount } = renderHook(({ blob }: { blob: Blob | undefined }) => useObjectUrl(blob), {
      initialProps: { blob: undefined as Blob | undefined },
    });
    expect(result.current).toBeNull();
    expect(URL.createObjectURL).not.toHaveBeenCalled();

    rerender({ blob: first });
    expect(result.current).toBe('blob:1');
    rerender({ blob: first });
    expect(URL.createObjectURL).toHaveBeenCalledTimes(1);

    rerender({ blob: new Blob(['b']) });
    expect(URL.revokeObjectURL).toHaveBeenCalledWith('blob:1');
    expect(result.current).toBe('blob:2');

    unmount();
    expect(URL.revokeObjectURL).toHaveBeenCalledWith('blob:2');
    expect(URL.revokeObjectURL).toHaveBeenCalledTimes(2);
  });
});
