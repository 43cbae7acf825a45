/**
 * The small part of Electron's API that Belfry uses. The `electron` package is an optional dependency
 * (its binary download may fail), so nothing type-checks against it: main.ts loads the real module
 * at run time and hands it around as this interface, and the unit tests pass a stand-in.
 */

export interface ElectronEvent {
  preventDefault(): void;
}

export interface NativeImage {
  isEmpty(): boolean;
  resize(options: { width: number; height: number }): NativeImage;
}

export interface NativeImageModule {
  createFromPath(path: string): NativeImage;
  createFromDataURL(dataUrl: string): NativeImage;
  createFromBuffer(buffer: Buffer): NativeImage;
  createEmpty(): NativeImage;
}

export interface MenuItemOptions {
  label?: string;
  /** Built-in behaviour (macOS needs `editMenu` for copy/paste shortcuts in text fields). */
  role?: 'appMenu' | 'editMenu' | 'windowMenu';
  type?: 'normal' | 'separator' | 'checkbox';
  checked?: boolean;
  enabled?: boolean;
  click?: () => void;
}

export interface MenuInstance {
  readonly items?: unknown[];
}

export interface MenuModule {
  buildFromTemplate(template: MenuItemOptions[]): MenuInstance;
  setApplicationMenu(menu: MenuInstance | null): void;
}

export interface TrayInstance {
  setToolTip(text: string): void;
  setTitle(title: string): void;
  setContextMenu(menu: MenuInstance): void;
  setImage(image: NativeImage): void;
  on(event: 'click' | 'double-click', listener: () => void): void;
  destroy(): void;
}

export type TrayConstructor = new (image: NativeImage) => TrayInstance;

export interface NotificationOptions {
  title: string;
  body: string;
  silent?: boolean;
  icon?: NativeImage;
  urgency?: 'normal' | 'critical' | 'low';
}

export interface NotificationInstance {
  show(): void;
  close(): void;
  on(event: 'click' | 'close', listener: () => void): void;
}

export interface NotificationConstructor {
  new (options: NotificationOptions): NotificationInstance;
  isSupported(): boolean;
}

export interface WebPreferences {
  preload?: string;
  contextIsolation: boolean;
  sandbox: boolean;
  nodeIntegration: boolean;
  nodeIntegrationInWorker: boolean;
  nodeIntegrationInSubFrames: boolean;
  webSecurity: boolean;
  allowRunningInsecureContent: boolean;
  webviewTag: boolean;
  navigateOnDragDrop: boolean;
  spellcheck: boolean;
}

export interface BrowserWindowOptions {
  width?: number;
  height?: number;
  minWidth?: number;
  minHeight?: number;
  show?: boolean;
  title?: string;
  icon?: string;
  backgroundColor?: string;
  autoHideMenuBar?: boolean;
  webPreferences: WebPreferences;
}

export interface WindowOpenDetails {
  url: string;
}

export interface WebRequestHeadersDetails {
  url: string;
  resourceType?: string;
  responseHeaders?: Record<string, string[] | string>;
}

export interface WebRequest {
  onHeadersReceived(
    listener: (
      details: WebRequestHeadersDetails,
      callback: (response: { responseHeaders?: Record<string, string[] | string>; cancel?: boolean }) => void,
    ) => void,
  ): void;
}

export interface Session {
  webRequest: WebRequest;
  setPermissionRequestHandler(
    handler:
      | ((webContents: unknown, permission: string, callback: (granted: boolean) => void) => void)
      | null,
  ): void;
  setPermissionCheckHandler(handler: ((webContents: unknown, permission: string) => boolean) | null): void;
}

export interface WebFrame {
  readonly url: string;
}

export interface WebContents {
  readonly id: number;
  readonly session: Session;
  getURL(): string;
  loadURL(url: string): Promise<void>;
  on(event: 'will-navigate' | 'will-redirect', listener: (event: ElectronEvent, url: string) => void): void;
  on(event: 'will-attach-webview', listener: (event: ElectronEvent) => void): void;
  on(event: 'did-finish-load', listener: () => void): void;
  setWindowOpenHandler(handler: (details: WindowOpenDetails) => { action: 'deny' | 'allow' }): void;
  send(channel: string, ...args: unknown[]): void;
}

export interface BrowserWindowInstance {
  readonly webContents: WebContents;
  show(): void;
  focus(): void;
  restore(): void;
  isMinimized(): boolean;
  isDestroyed(): boolean;
  hide(): void;
  close(): void;
  destroy(): void;
  loadURL(url: string): Promise<void>;
  once(event: 'ready-to-show', listener: () => void): void;
  on(event: 'close', listener: (event: ElectronEvent) => void): void;
  on(event: 'closed', listener: () => void): void;
}

export type BrowserWindowConstructor = new (options: BrowserWindowOptions) => BrowserWindowInstance;

/** What every IPC handler is given: the sender frame decides whether the call is trusted. */
export interface IpcMainInvokeEvent {
  readonly sender: WebContents;
  readonly senderFrame: WebFrame | null;
}

export interface IpcMain {
  handle(channel: string, listener: (event: IpcMainInvokeEvent, ...args: unknown[]) => unknown): void;
  removeHandler(channel: string): void;
}

export interface Shell {
  openExternal(url: string): Promise<void>;
}

export interface PowerMonitor {
  on(event: 'resume' | 'suspend' | 'on-battery' | 'on-ac', listener: () => void): void;
  /** True while the machine runs on battery (Electron ≥ 29; older ones report on-battery/on-ac only). */
  isOnBatteryPower?(): boolean;
}

export interface LoginItemSettings {
  openAtLogin: boolean;
  openAsHidden?: boolean;
}

export interface App {
  whenReady(): Promise<void>;
  requestSingleInstanceLock(): boolean;
  quit(): void;
  exit(code?: number): void;
  /** Starts a new instance when this one exits; `args` replace process.argv.slice(1). */
  relaunch(options?: { args?: string[] }): void;
  getPath(name: 'userData' | 'logs' | 'home'): string;
  getVersion(): string;
  setLoginItemSettings(settings: LoginItemSettings): void;
  setAppUserModelId?(id: string): void;
  on(event: 'second-instance' | 'activate' | 'window-all-closed', listener: () => void): void;
  on(event: 'before-quit' | 'will-quit', listener: (event: ElectronEvent) => void): void;
  on(event: 'web-contents-created', listener: (event: ElectronEvent, contents: WebContents) => void): void;
  readonly isPackaged: boolean;
}

export interface MessageBoxOptions {
  type?: 'none' | 'info' | 'error' | 'question' | 'warning';
  title?: string;
  message: string;
  detail?: string;
  buttons?: string[];
}

export interface Dialog {
  showMessageBox(options: MessageBoxOptions): Promise<{ response: number }>;
  showErrorBox(title: string, content: string): void;
}

/** The Electron module as Belfry uses it. */
export interface ElectronApi {
  app: App;
  BrowserWindow: BrowserWindowConstructor;
  Tray: TrayConstructor;
  Menu: MenuModule;
  Notification: NotificationConstructor;
  ipcMain: IpcMain;
  shell: Shell;
  powerMonitor: PowerMonitor;
  nativeImage: NativeImageModule;
  session: { defaultSession: Session };
  dialog: Dialog;
}

/** electron-store v11, as far as the settings use it. */
export interface KeyValueStore<T> {
  get<K extends keyof T>(key: K): T[K];
  set<K extends keyof T>(key: K, value: T[K]): void;
}
