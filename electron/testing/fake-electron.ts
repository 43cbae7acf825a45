import type {
  BrowserWindowOptions,
  ElectronApi,
  ElectronEvent,
  IpcMainInvokeEvent,
  LoginItemSettings,
  MenuItemOptions,
  MessageBoxOptions,
  NativeImage,
  NotificationOptions,
  Session,
  WebContents,
  WebRequestHeadersDetails,
} from '../electron-api';

/** A stand-in for the `electron` module: records what the app does and lets tests fire events. */
type Listener = (...args: never[]) => unknown;

class Emitter {
  readonly listeners = new Map<string, Listener[]>();
  on(event: string, listener: Listener): this {
    this.listeners.set(event, [...(this.listeners.get(event) ?? []), listener]);
    return this;
  }
  once(event: string, listener: Listener): this {
    return this.on(event, listener);
  }
  fire(event: string, ...args: unknown[]): unknown[] {
    return (this.listeners.get(event) ?? []).map((l) => (l as (...a: unknown[]) => unknown)(...args));
  }
}

export function fakeEvent(): ElectronEvent & { prevented: boolean } {
  const e = {
    prevented: false,
    preventDefault() {
      e.prevented = true;
    },
  };
  return e;
}

const image = (empty = false): NativeImage => ({ isEmpty: () => empty, resize: () => image(empty) });

let nextContentsId = 1;

export class FakeSession implements Session {
  permissionRequest: ((wc: unknown, permission: string, cb: (granted: boolean) => void) => void) | null =
    null;
  permissionCheck: ((wc: unknown, permission: string) => boolean) | null = null;
  headersListener:
    | ((
        d: WebRequestHeadersDetails,
        cb: (r: { responseHeaders?: Record<string, string[] | string> }) => void,
      ) => void)
    | null = null;
  webRequest = {
    onHeadersReceived: (l: NonNullable<FakeSession['headersListener']>) => {
      this.headersListener = l;
    },
  };
  setPermissionRequestHandler(h: FakeSession['permissionRequest']) {
    this.permissionRequest = h;
  }
  setPermissionCheckHandler(h: FakeSession['permissionCheck']) {
    this.permissionCheck = h;
  }
}

export class FakeWebContents extends Emitter implements WebContents {
  readonly id = nextContentsId++;
  url = '';
  sent: { channel: string; args: unknown[] }[] = [];
  windowOpenHandler: ((d: { url: string }) => { action: 'deny' | 'allow' }) | null = null;
  constructor(readonly session: Session) {
    super();
  }
  getURL() {
    return this.url;
  }
  async loadURL(url: string) {
    this.url = url;
  }
  setWindowOpenHandler(h: FakeWebContents['windowOpenHandler']) {
    this.windowOpenHandler = h;
  }
  send(channel: string, ...args: unknown[]) {
    this.sent.push({ channel, args });
  }
}

export interface FakeElectron extends ElectronApi {
  windows: FakeWindow[];
  trays: FakeTray[];
  notifications: FakeNotification[];
  opened: string[];
  loginItems: LoginItemSettings[];
  messageBoxes: MessageBoxOptions[];
  handlers: Map<string, (event: IpcMainInvokeEvent, ...args: unknown[]) => unknown>;
  appEvents: Emitter;
  powerEvents: Emitter;
  /** What powerMonitor.isOnBatteryPower() answers (set before runDesktop for the state at start). */
  onBattery: boolean;
  quitCalls: number;
  exitCodes: number[];
  /** The args of every app.relaunch() call. */
  relaunches: (string[] | undefined)[];
  singleInstance: boolean;
  /** Invokes an IPC channel as the given web contents at the given frame URL. */
  invoke(
    channel: string,
    from: { contents: WebContents; frameUrl: string | null },
    ...args: unknown[]
  ): Promise<unknown>;
}

export class FakeWindow extends Emitter {
  readonly webContents: FakeWebContents;
  visible = false;
  destroyed = false;
  constructor(
    readonly options: BrowserWindowOptions,
    session: Session,
  ) {
    super();
    this.webContents = new FakeWebContents(session);
  }
  show() {
    this.visible = true;
  }
  focus() {}
  restore() {}
  isMinimized() {
    return false;
  }
  isDestroyed() {
    return this.destroyed;
  }
  hide() {
    this.visible = false;
  }
  close() {
    const e = fakeEvent();
    this.fire('close', e);
    if (!e.prevented) this.destroy();
  }
  destroy() {
    this.destroyed = true;
    this.fire('closed');
  }
  loadURL(url: string) {
    return this.webContents.loadURL(url);
  }
}

export class FakeTray extends Emitter {
  title = '';
  tooltip = '';
  menu: MenuItemOptions[] = [];
  destroyed = false;
  setToolTip(t: string) {
    this.tooltip = t;
  }
  setTitle(t: string) {
    this.title = t;
  }
  setContextMenu(menu: { template?: MenuItemOptions[] }) {
    this.menu = menu.template ?? [];
  }
  setImage() {}
  destroy() {
    this.destroyed = true;
  }
}

export class FakeNotification extends Emitter {
  shown = false;
  constructor(readonly options: NotificationOptions) {
    super();
  }
  show() {
    this.shown = true;
  }
  close() {}
  click() {
    this.fire('click');
  }
}

export function fakeElectron(opts: { userData: string; singleInstance?: boolean }): FakeElectron {
  const session = new FakeSession();
  const appEvents = new Emitter();
  const powerEvents = new Emitter();
  const fake = {} as FakeElectron;
  const windows: FakeWindow[] = [];
  const trays: FakeTray[] = [];
  const notifications: FakeNotification[] = [];
  const handlers = new Map<string, (event: IpcMainInvokeEvent, ...args: unknown[]) => unknown>();
  Object.assign(fake, {
    windows,
    trays,
    notifications,
    opened: [],
    loginItems: [],
    messageBoxes: [],
    handlers,
    appEvents,
    powerEvents,
    onBattery: false,
    quitCalls: 0,
    exitCodes: [],
    relaunches: [],
    singleInstance: opts.singleInstance ?? true,
    app: {
      isPackaged: false,
      whenReady: async () => {},
      requestSingleInstanceLock: () => fake.singleInstance,
      quit: () => {
        fake.quitCalls++;
        appEvents.fire('before-quit', fakeEvent());
      },
      exit: (code = 0) => fake.exitCodes.push(code),
      relaunch: (o?: { args?: string[] }) => fake.relaunches.push(o?.args),
      getPath: () => opts.userData,
      getVersion: () => '0.0.0-test',
      setLoginItemSettings: (s: LoginItemSettings) => fake.loginItems.push(s),
      on: (event: string, l: Listener) => appEvents.on(event, l),
    },
    BrowserWindow: class extends FakeWindow {
      constructor(o: BrowserWindowOptions) {
        super(o, session);
        windows.push(this);
        appEvents.fire('web-contents-created', fakeEvent(), this.webContents);
      }
    },
    Tray: class extends FakeTray {
      constructor(_img: NativeImage) {
        super();
        trays.push(this);
      }
    },
    Menu: {
      buildFromTemplate: (template: MenuItemOptions[]) => ({ template }),
      setApplicationMenu: () => {},
    },
    Notification: Object.assign(
      class extends FakeNotification {
        constructor(o: NotificationOptions) {
          super(o);
          notifications.push(this);
        }
      },
      { isSupported: () => true },
    ),
    ipcMain: {
      handle: (channel: string, l: (event: IpcMainInvokeEvent, ...args: unknown[]) => unknown) => {
        if (handlers.has(channel)) throw new Error(`second handler for ${channel}`);
        handlers.set(channel, l);
      },
      removeHandler: (channel: string) => handlers.delete(channel),
    },
    shell: {
      openExternal: async (url: string) => {
        fake.opened.push(url);
      },
    },
    powerMonitor: {
      on: (event: string, l: Listener) => powerEvents.on(event, l),
      isOnBatteryPower: () => fake.onBattery,
    },
    nativeImage: {
      createFromPath: () => image(),
      createFromDataURL: () => image(),
      createFromBuffer: (b: Buffer) => image(b.length < 4),
      createEmpty: () => image(true),
    },
    session: { defaultSession: session },
    dialog: {
      showMessageBox: async (o: MessageBoxOptions) => {
        fake.messageBoxes.push(o);
        return { response: 0 };
      },
      showErrorBox: () => {},
    },
    invoke: async (
      channel: string,
      from: { contents: WebContents; frameUrl: string | null },
      ...args: unknown[]
    ) => {
      const h = handlers.get(channel);
      if (!h) throw new Error(`no handler for ${channel}`);
      return h(
        { sender: from.contents, senderFrame: from.frameUrl === null ? null : { url: from.frameUrl } },
        ...args,
      );
    },
  });
  return fake;
}

/** A Map-backed electron-store. */
export function memoryStore<T extends object>(initial: Partial<T> = {}) {
  const data = new Map<keyof T, unknown>(Object.entries(initial) as [keyof T, unknown][]);
  return {
    data,
    get<K extends keyof T>(key: K): T[K] {
      return data.get(key) as T[K];
    },
    set<K extends keyof T>(key: K, value: T[K]): void {
      data.set(key, value);
    },
  };
}
