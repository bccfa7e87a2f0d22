package cluster

import "testing/synctest"

func synctestWait() { synctest.Wait() }
