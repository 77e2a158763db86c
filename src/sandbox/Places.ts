/** Argentine cities (with their provinces) for synthetic vehicles, weighted roughly by fleet size. */
export interface Place {
  readonly city: string
  readonly province: string
  readonly weight: number
}

export const PLACES: ReadonlyArray<Place> = [
  { city: "Ciudad Autónoma de Buenos Aires", province: "Ciudad Autónoma de Buenos Aires", weight: 10 },
  { city: "La Plata", province: "Buenos Aires", weight: 5 },
  { city: "Mar del Plata", province: "Buenos Aires", weight: 4 },
  { city: "Bahía Blanca", province: "Buenos Aires", weight: 3 },
  { city: "Quilmes", province: "Buenos Aires", weight: 4 },
  { city: "Morón", province: "Buenos Aires", weight: 3 },
  { city: "San Isidro", province: "Buenos Aires", weight: 3 },
  { city: "Lomas de Zamora", province: "Buenos Aires", weight: 3 },
  { city: "Tandil", province: "Buenos Aires", weight: 2 },
  { city: "Córdoba", province: "Córdoba", weight: 7 },
  { city: "Río Cuarto", province: "Córdoba", weight: 2 },
  { city: "Villa María", province: "Córdoba", weight: 1 },
  { city: "Rosario", province: "Santa Fe", weight: 6 },
  { city: "Santa Fe", province: "Santa Fe", weight: 3 },
  { city: "Rafaela", province: "Santa Fe", weight: 1 },
  { city: "Mendoza", province: "Mendoza", weight: 4 },
  { city: "San Rafael", province: "Mendoza", weight: 1 },
  { city: "San Miguel de Tucumán", province: "Tucumán", weight: 3 },
  { city: "Salta", province: "Salta", weight: 2 },
  { city: "San Salvador de Jujuy", province: "Jujuy", weight: 1 },
  { city: "Neuquén", province: "Neuquén", weight: 2 },
  { city: "San Carlos de Bariloche", province: "Río Negro", weight: 1 },
  { city: "Paraná", province: "Entre Ríos", weight: 2 },
  { city: "Corrientes", province: "Corrientes", weight: 1 },
  { city: "Posadas", province: "Misiones", weight: 1 },
  { city: "Resistencia", province: "Chaco", weight: 1 },
  { city: "San Juan", province: "San Juan", weight: 1 },
  { city: "Santiago del Estero", province: "Santiago del Estero", weight: 1 },
  { city: "Comodoro Rivadavia", province: "Chubut", weight: 1 },
  { city: "Río Gallegos", province: "Santa Cruz", weight: 1 },
  { city: "Ushuaia", province: "Tierra del Fuego", weight: 1 },
  { city: "Santa Rosa", province: "La Pampa", weight: 1 },
  { city: "San Luis", province: "San Luis", weight: 1 },
  { city: "San Fernando del Valle de Catamarca", province: "Catamarca", weight: 1 },
  { city: "La Rioja", province: "La Rioja", weight: 1 },
  { city: "Formosa", province: "Formosa", weight: 1 }
]
