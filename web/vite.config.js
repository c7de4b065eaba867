// Vite build of the dashboards: everything bundled into dist/ (no CDN,
// no request leaves the machine); scripts/embed-assets turns dist/ into
// the C asset table the nagare binary serves.
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    chunkSizeWarningLimit: 4000,
    assetsInlineLimit: 0,
  },
  server: {
    // `npm run dev` against a running `nagare serve` on 8080
    proxy: { '/api': 'http://127.0.0.1:8080' },
  },
});
