import type { FileOut } from '@/client';
import { ApiError, codeOf, detailOf, handleUnauthorized } from '@/lib/api';
import { getToken } from '@/features/auth/auth-store';
import { formatBytes } from '@/lib/utils';

/** Readable sentence for a failed upload, from the server's {detail, code}. */
export function uploadErrorMessage(status: number, body: unknown, file: File): string {
  const hasDetail = !!body && typeof body === 'object' && typeof (body as { detail?: unknown }).detail === 'string';
  if (hasDetail) {
    const detail = detailOf(body, status);
    const named = detail.includes(file.name) ? detail : `${file.name}: ${detail}`;
    return status === 413 ? `${named.replace(/\.$/, '')} (this file is ${formatBytes(file.size)}).` : named;
  }
  if (status === 413) return `${file.name} is too large (${formatBytes(file.size)}).`;
  if (status === 415) return `${file.name} is not a supported file type.`;
  return `${file.name}: ${detailOf(body, status)}`;
}

/**
 * Uploads one file with XMLHttpRequest, which (unlike fetch) reports upload progress.
 * The generated client covers the endpoint, but cannot report progress.
 */
export function uploadFile(projectId: string, file: File, onProgress: (fraction: number) => void, signal?: AbortSignal) {
  return new Promise<FileOut>((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `/api/v1/projects/${projectId}/files`);
    const token = getToken();
    if (token) xhr.setRequestHeader('Authorization', `Bearer ${token}`);
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    xhr.onload = () => {
      let body: unknown = null;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        /* not JSON */
      }
      if (xhr.status >= 200 && xhr.status < 300) {
        onProgress(1);
        resolve(body as FileOut);
      } else {
        if (xhr.status === 401) handleUnauthorized(token, body);
        reject(new ApiError(xhr.status, uploadErrorMessage(xhr.status, body, file), codeOf(body)));
      }
    };
    xhr.onerror = () => reject(new ApiError(0, `${file.name}: the upload failed — the server could not be reached.`));
    xhr.onabort = () => reject(new ApiError(0, `${file.name}: upload cancelled.`));
    signal?.addEventListener('abort', () => xhr.abort());
    const form = new FormData();
    form.append('file', file);
    xhr.send(form);
  });
}
