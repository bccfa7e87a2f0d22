package api

import (
	"net/http"

	"github.com/vigia/vigia/config"
)

// Model is a camera model of the creation info.
type Model struct {
	ID             int    `json:"id"`
	Name           string `json:"name"`
	ManufacturerID int    `json:"manufacturer_id"`
	// RTSPPath is the path and query of the model's RTSP URL; {channel},
	// {stream} (0 or 1) and {stream1} (1 or 2) are replaced.
	RTSPPath string `json:"-"`
}

// Manufacturer is a manufacturer of the creation info with its models.
type Manufacturer struct {
	ID          int     `json:"id"`
	Name        string  `json:"name"`
	CameraModel []Model `json:"camera_model"`
}

// Resolution is a plan resolution.
type Resolution struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
	// Width and Height are the largest picture of the plan (0: no limit).
	Width  int `json:"-"`
	Height int `json:"-"`
}

// CreationInfo is the body of GET /api/v1/cameras/create (spec 2.6).
type CreationInfo struct {
	Manufacturers    []Manufacturer               `json:"manufacturer"`
	Plans            Plans                        `json:"plans"`
	InstallationInfo map[string]map[string]string `json:"installation_info"`
}

// Plans are the plan values of the creation info.
type Plans struct {
	HistoryDays []int        `json:"history_days"`
	Resolutions []Resolution `json:"resolutions"`
}

// DefaultCreationInfo is the creation info used when the configuration
// gives none.
func DefaultCreationInfo() CreationInfo {
	const dahua = "/cam/realmonitor?channel={channel}&subtype={stream}"
	const hik = "/Streaming/Channels/{channel}0{stream1}"
	return CreationInfo{
		Manufacturers: []Manufacturer{
			{ID: 1, Name: "Intelbras", CameraModel: []Model{
				{ID: 1, Name: "VIP (IP camera)", ManufacturerID: 1, RTSPPath: dahua},
				{ID: 2, Name: "MHDX (DVR)", ManufacturerID: 1, RTSPPath: dahua},
			}},
			{ID: 2, Name: "Hikvision", CameraModel: []Model{
				{ID: 3, Name: "DS-2CD (IP camera)", ManufacturerID: 2, RTSPPath: hik},
				{ID: 4, Name: "DS-7xxx (DVR/NVR)", ManufacturerID: 2, RTSPPath: hik},
			}},
			{ID: 3, Name: "Dahua", CameraModel: []Model{
				{ID: 5, Name: "IPC (IP camera)", ManufacturerID: 3, RTSPPath: dahua},
			}},
			{ID: 4, Name: "Generic", CameraModel: []Model{
				{ID: 6, Name: "ONVIF Profile S", ManufacturerID: 4, RTSPPath: onvifPath},
			}},
		},
		Plans: Plans{
			HistoryDays: []int{1, 3, 7, 15, 30, 60, 90},
			Resolutions: []Resolution{
				{ID: 1, Name: "SD 480p", Width: 854, Height: 480},
				{ID: 2, Name: "HD 720p", Width: 1280, Height: 720},
				{ID: 3, Name: "Full HD 1080p", Width: 1920, Height: 1080},
				{ID: 4, Name: "4MP 1440p", Width: 2560, Height: 1440},
				{ID: 5, Name: "4K 2160p", Width: 3840, Height: 2160},
			},
		},
		InstallationInfo: installationInfo(),
	}
}

func installationInfo() map[string]map[string]string {
	return map[string]map[string]string{
		"installation_local": {"1": "private premises", "2": "public place"},
		"installation_area":  {"1": "indoor area", "2": "outdoor area"},
		"equipment_state":    {"1": "new camera/DVR", "2": "pre-existing camera/DVR"},
	}
}

// CreationInfoFrom builds the creation info from the api section of the
// configuration; each empty list takes the default's.
func CreationInfoFrom(c config.APIConfig) CreationInfo {
	info := DefaultCreationInfo()
	if days, err := config.ParseIntList(c.HistoryDays); err == nil {
		info.Plans.HistoryDays = days
	}
	if len(c.Resolutions) > 0 {
		info.Plans.Resolutions = nil
		for _, r := range c.Resolutions {
			info.Plans.Resolutions = append(info.Plans.Resolutions, Resolution{ID: r.ID, Name: r.Name, Width: r.Width, Height: r.Height})
		}
	}
	if len(c.Manufacturers) > 0 || len(c.CameraModels) > 0 {
		var mfs []Manufacturer
		if len(c.Manufacturers) > 0 {
			for _, m := range c.Manufacturers {
				mfs = append(mfs, Manufacturer{ID: m.ID, Name: m.Name, CameraModel: []Model{}})
			}
		} else {
			for _, m := range info.Manufacturers {
				mfs = append(mfs, Manufacturer{ID: m.ID, Name: m.Name, CameraModel: []Model{}})
			}
		}
		models := c.CameraModels
		for i := range mfs {
			if len(models) == 0 {
				for _, dm := range info.Manufacturers {
					if dm.ID == mfs[i].ID {
						mfs[i].CameraModel = dm.CameraModel
					}
				}
				continue
			}
			for _, m := range models {
				if m.ManufacturerID == mfs[i].ID {
					mfs[i].CameraModel = append(mfs[i].CameraModel, Model{ID: m.ID, Name: m.Name, ManufacturerID: m.ManufacturerID, RTSPPath: m.RTSPPath})
				}
			}
		}
		info.Manufacturers = mfs
	}
	return info
}

// model returns the model id.
func (i CreationInfo) model(id int) (Model, bool) {
	for _, m := range i.Manufacturers {
		for _, cm := range m.CameraModel {
			if cm.ID == id {
				return cm, true
			}
		}
	}
	return Model{}, false
}

// resolution returns the resolution id.
func (i CreationInfo) resolution(id int) (Resolution, bool) {
	for _, r := range i.Plans.Resolutions {
		if r.ID == id {
			return r, true
		}
	}
	return Resolution{}, false
}

func (i CreationInfo) modelIDs() []int {
	var ids []int
	for _, m := range i.Manufacturers {
		for _, cm := range m.CameraModel {
			ids = append(ids, cm.ID)
		}
	}
	return ids
}

func (i CreationInfo) resolutionIDs() []int {
	var ids []int
	for _, r := range i.Plans.Resolutions {
		ids = append(ids, r.ID)
	}
	return ids
}

// creationInfo is GET /api/v1/cameras/create (operator).
func (s *Server) creationInfo(w http.ResponseWriter, r *http.Request) error {
	in, err := s.readInput(w, r)
	if err != nil {
		return err
	}
	if err := s.operatorOnly(r, in); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.cfg.Info)
	return nil
}
