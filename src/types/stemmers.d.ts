// Types of the two stemmers of @orama/stemmers the analyzer uses: the package declares them
// through `exports`, which this project's `moduleResolution: node` does not read.
declare module '@orama/stemmers/russian' {
  export function stemmer(word: string): string;
}
declare module '@orama/stemmers/arabic' {
  export function stemmer(word: string): string;
}
