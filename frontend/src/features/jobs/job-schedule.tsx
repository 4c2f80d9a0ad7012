import { Loader2 } from 'lucide-react';
import { useId, useState } from 'react';
import { toast } from 'sonner';
import { FormError } from '@/components/form-error';
import { Button } from '@/components/ui/button';
import { Input, Label } from '@/components/ui/input';
import { Segmented } from '@/components/ui/segmented';
import { useUpdateJob } from './mutations';
import { cronInWords, everyInWords, inZone, scheduleInWords, timeZones } from './schedule-words';
import { When } from './status';
import type { Job, Schedule } from './types';

type Mode = 'cron' | 'every';


const PRESETS: { label: string; cron: string }[] = [
  { label: 'Every Monday 08:00', cron: '0 8 * * 1' },
  { label: 'Every weekday 07:00', cron: '0 7 * * 1-5' },
  { label: 'Every day 06:00', cron: '0 6 * * *' },
  { label: 'First of the month 08:00', cron: '0 8 1 * *' },
];

const failure = (e: unknown) => (e instanceof Error && e.message ? e.message : 'The schedule could not be saved.');

/**
 * When the job runs by itself: a cron expression or every N minutes, in a time zone (at most
 * every five minutes: the server says so, inline, with any other reason it refuses); or on
 * demand only. Editors change it; viewers read it.
 */
export function JobSchedule({ job, editor }: { job: Job; editor: boolean }) {
  const update = useUpdateJob(job);
  const id = useId();
  const current = job.schedule ?? null;
  const [mode, setMode] = useState<Mode>(current?.every_minutes != null ? 'every' : 'cron');
  const [cron, setCron] = useState(current?.cron ?? '0 8 * * 1');
  const [every, setEvery] = useState(String(current?.every_minutes ?? 60));
  const [zone, setZone] = useState(current?.timezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone);
  const save = (schedule: Schedule | null) =>
    update.mutate({ schedule }, { onSuccess: () => toast.success(schedule ? 'Schedule saved.' : 'The job now runs on demand only.') });
  const words = mode === 'cron' ? cronInWords(cron) : Number(every) > 0 ? everyInWords(Number(every)) : null;
  return (
    <div className="space-y-5" data-testid="job-schedule-tab">
      <div className="space-y-1 text-sm">
        <p>
          <span className="text-muted-foreground">Now: </span>
          <span className="font-medium" data-testid="schedule-now">
            {scheduleInWords(current)}
          </span>
          {job.paused && current && <span className="text-amber-700 dark:text-amber-400"> (paused)</span>}
        </p>
        {current && job.next_run_at && !job.paused && (
          <p data-testid="schedule-next">
            <span className="text-muted-foreground">Next run: </span>
            <When iso={job.next_run_at} /> <span className="text-xs text-muted-foreground">({inZone(job.next_run_at, current.timezone)})</span>
          </p>
        )}
      </div>
      {editor && (
        <form
          className="space-y-4 rounded-lg border p-4"
          onSubmit={(e) => {
            e.preventDefault();
            save(mode === 'cron' ? { cron: cron.trim(), timezone: zone.trim() || 'UTC' } : { every_minutes: Number(every), timezone: zone.trim() || 'UTC' });
          }}
        >
          <Segmented
            label="Kind of schedule"
            className="grid-cols-2 sm:max-w-sm"
            value={mode}
            onChange={setMode}
            items={[
              { value: 'cron', content: 'At set times (cron)' },
              { value: 'every', content: 'Every N minutes' },
            ]}
          />
          {mode === 'cron' ? (
            <div className="space-y-2">
              <div className="flex flex-wrap gap-1.5">
                {PRESETS.map((p) => (
                  <Button key={p.cron} type="button" variant={cron === p.cron ? 'secondary' : 'ghost'} size="sm" onClick={() => setCron(p.cron)}>
                    {p.label}
                  </Button>
                ))}
              </div>
              <Label htmlFor={`${id}-cron`} className="block">Cron expression</Label>
              <Input id={`${id}-cron`} value={cron} onChange={(e) => setCron(e.target.value)} className="font-mono sm:max-w-xs" placeholder="0 8 * * 1" />
            </div>
          ) : (
            <div className="space-y-2">
              <Label htmlFor={`${id}-every`} className="block">Every (minutes, at least 5)</Label>
              <Input id={`${id}-every`} type="number" value={every} onChange={(e) => setEvery(e.target.value)} className="sm:max-w-32" />
            </div>
          )}
          <div className="space-y-2">
            <Label htmlFor={`${id}-zone`} className="block">Time zone</Label>
            <Input id={`${id}-zone`} list={`${id}-zones`} value={zone} onChange={(e) => setZone(e.target.value)} className="sm:max-w-xs" />
            <datalist id={`${id}-zones`}>
              {timeZones().map((z) => (
                <option key={z} value={z} />
              ))}
            </datalist>
          </div>
          <p className="text-sm text-muted-foreground" data-testid="schedule-preview">
            {words ? `${words}${mode === 'cron' ? ` ${zone || 'UTC'}` : ''}` : 'A schedule the server will read as it is.'}
          </p>
          <FormError>{update.isError ? failure(update.error) : null}</FormError>
          <div className="flex flex-wrap gap-2">
            <Button type="submit" disabled={update.isPending}>
              {update.isPending && <Loader2 className="animate-spin" />} Save schedule
            </Button>
            {current && (
              <Button type="button" variant="outline" disabled={update.isPending} onClick={() => save(null)}>
                Clear: on demand only
              </Button>
            )}
          </div>
        </form>
      )}
    </div>
  );
}
