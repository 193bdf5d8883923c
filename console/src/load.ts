import { useEffect, useState } from 'preact/hooks';

export interface Loaded<T> {
  readonly data?: T;
  readonly error?: Error;
  readonly loading: boolean;
  /** Loads again (after a write, or on a timer). */
  readonly reload: () => void;
}

/** Runs `load` when `keys` change; an answer that arrives after newer keys is dropped. */
export function useLoad<T>(load: () => Promise<T>, keys: readonly unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean }>({
    loading: true,
  });
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    let current = true;
    setState((previous) => ({ ...previous, loading: true }));
    load().then(
      (data) => current && setState({ data, loading: false }),
      (error: Error) => current && setState({ error, loading: false }),
    );
    return () => {
      current = false;
    };
  }, [...keys, generation]);
  return { ...state, reload: () => setGeneration((n) => n + 1) };
}

export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}
