import { useEffect, useState } from 'react';

/**
 * An object URL for `blob` while the component shows it: revoked when the blob is replaced or
 * the component unmounts, so the browser can free the bytes. Null until it is made.
 */
export function useObjectUrl(blob: Blob | null | undefined): string | null {
  const [url, setUrl] = useState<string | null>(null);
  useEffect(() => {
    if (!blob) {
      setUrl(null);
      return;
    }
    const href = URL.createObjectURL(blob);
    setUrl(href);
    return () => URL.revokeObjectURL(href);
  }, [blob]);
  return url;
}
