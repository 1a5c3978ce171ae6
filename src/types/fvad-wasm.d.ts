/** @echogarden/fvad-wasm ships no types: its default export is the Emscripten module factory (src/capture/providers/vad.ts). */
declare module '@echogarden/fvad-wasm' {
  const fvad: () => Promise<unknown>;
  export default fvad;
}
