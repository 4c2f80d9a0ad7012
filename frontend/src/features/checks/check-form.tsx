import { useId, useState } from 'react';
import { FormError } from '@/components/form-error';
import { Button } from '@/components/ui/button';
import { Input, Label, Textarea } from '@/components/ui/input';
import { expectedText, parseExpected } from './checks';
import type { ProjectCheck } from './types';

export type CheckFields = { question: string; expected: Record<string, string>; format: string };

/** A check's question, its expected answer as name=value pairs, and the answer format asked of the agent. */
export function CheckForm({
  check,
  onSave,
  onCancel,
  pending,
  error,
  initialExpected,
  submitLabel,
}: {
  check?: ProjectCheck | null;
  /** The expected answer to start from ("revenue=1200"), when the check is not one being edited. */
  initialExpected?: string;
  submitLabel?: string;
  onSave: (fields: CheckFields) => void;
  onCancel: () => void;
  pending?: boolean;
  error?: string | null;
}) {
  const id = useId();
  const [question, setQuestion] = useState(check?.question ?? '');
  const [expected, setExpected] = useState(initialExpected ?? (check ? expectedText(check.expected) : ''));
  const [format, setFormat] = useState(check?.format ?? '');
  const [problem, setProblem] = useState<string | null>(null);
  const save = () => {
    if (!question.trim()) return setProblem('Write the question the check asks.');
    const parsed = parseExpected(expected);
    if ('problem' in parsed) return setProblem(parsed.problem);
    setProblem(null);
    onSave({ question: question.trim(), expected: parsed.expected, format: format.trim() });
  };
  return (
    <form
      className="grid gap-3 rounded-lg border bg-card p-4"
      data-testid="check-form"
      onSubmit={(e) => {
        e.preventDefault();
        save();
      }}
    >
      <div className="grid gap-1.5">
        <Label htmlFor={`${id}-q`}>Question</Label>
        <Textarea id={`${id}-q`} rows={2} value={question} placeholder="What was the revenue in March?" onChange={(e) => setQuestion(e.target.value)} />
      </div>
      <div className="grid gap-1.5">
        <Label htmlFor={`${id}-e`}>Expected answer</Label>
        <Input id={`${id}-e`} className="font-mono text-[13px]" value={expected} placeholder="revenue=1200, customers=42" onChange={(e) => setExpected(e.target.value)} />
        <p className="text-xs text-muted-foreground">name=value pairs; the answer passes when it ends with @name[value] for each.</p>
      </div>
      <div className="grid gap-1.5">
        <Label htmlFor={`${id}-f`}>Answer format (optional)</Label>
        <Input id={`${id}-f`} value={format} placeholder="@revenue[number, rounded to 2 decimals]" onChange={(e) => setFormat(e.target.value)} />
      </div>
      <FormError>{problem ?? error ?? null}</FormError>
      <div className="flex justify-end gap-2">
        <Button type="button" variant="outline" size="sm" onClick={onCancel}>
          Cancel
        </Button>
        <Button type="submit" size="sm" disabled={pending}>
          {submitLabel ?? (check ? 'Save' : 'Add check')}
        </Button>
      </div>
    </form>
  );
}
