/** The entry point: reads where the API is (config.json, written by the server of this page), then renders the app. */
import { createRoot } from 'react-dom/client';
import { App } from './App.js';
import './styles.css';

const config = (await (await fetch('./config.json')).json()) as { api: string };
createRoot(document.getElementById('root')!).render(<App apiUrl={config.api} />);
