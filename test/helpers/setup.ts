import { installNetworkGuard } from './network-guard';

installNetworkGuard();
