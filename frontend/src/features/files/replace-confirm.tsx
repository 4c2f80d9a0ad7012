import { useState, type ReactNode } from 'react';
import type { FileOut } from '@/client';
import { Button } from '@/components/ui/button';
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogTitle } from '@/components/ui/dialog';

/**
 * Uploads that ask first when a file of the same name is in the project: the upload would become
 * its new version (what questions read from then on), so the user says so, knowing the old version
 * stays. Files with new names go up at once; the others wait, one dialog each.
 */
export function useReplaceConfirm(existing: FileOut[], upload: (files: File[]) => void): { offer: (files: File[]) => void; dialog: ReactNode } {
  const [waiting, setWaiting] = useState<{ file: File; current: FileOut }[]>([]);
  const offer = (files: File[]) => {
    const byName = new Map(existing.map((f) => [f.name, f]));
    const fresh = files.filter((f) => !byName.has(f.name));
    if (fresh.length) upload(fresh);
    const replacing = files.flatMap((file) => {
      const current = byName.get(file.name);
      return current ? [{ file, current }] : [];
    });
    if (replacing.length) setWaiting((w) => [...w, ...replacing]);
  };
  const next = waiting[0];
  const done = (replace: boolean) => {
    if (replace && next) upload([next.file]);
    setWaiting((w) => w.slice(1));
  };
  const dialog = (
    <Dialog open={!!next} onOpenChange={(open) => !open && done(false)}>
      {next && (
        <DialogContent data-testid="replace-confirm">
          <DialogTitle>Replace {next.current.name}?</DialogTitle>
          <DialogDescription>
            This project already has {next.current.name} (v{next.current.version}). The upload becomes v{next.current.version + 1}, the
            version new questions read; v{next.current.version} stays available in the file's versions, and the answers computed from it keep
            saying which version they read.
          </DialogDescription>
          <DialogFooter>
            <Button variant="outline" onClick={() => done(false)}>
              Cancel
            </Button>
            <Button onClick={() => done(true)} autoFocus>
              Upload as v{next.current.version + 1}
            </Button>
          </DialogFooter>
        </DialogContent>
      )}
    </Dialog>
  );
  return { offer, dialog };
}
